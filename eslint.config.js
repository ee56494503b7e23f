import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import layers from './hack/eslint/layers.js';
import fileSize from './hack/eslint/file-size.js';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.cache/', 'coverage/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
  {
    // Gardener's `.import-restrictions`: each folder of src/ in a layer (lowest first); a file imports only its own
    // folder and the layers below its own, and the folders of one layer not each other. The gardenlet reaches the
    // extensions (provider-local included) only through the objects they share, as Gardener's does.
    files: ['src/**/*.ts'],
    plugins: { layers },
    rules: {
      'layers/layers': [
        'error',
        {
          root: 'src',
          layers: [
            // primitives: addresses, feature gates, certificates, image names
            ['net', 'featuregate', 'pki', 'imagevector'],
            // the API: types, defaulting, validation, the admission pipeline, the table of resources
            ['apis'],
            // the API client and the controller runtime
            ['runtime'],
            // the host toolkit: processes, network namespaces, cgroups, exit cleanup, ports
            ['system'],
            // what every extension controller shares: the status it reports (Gardener's extensions library)
            ['extensions/common'],
            // the components, each on its own: they meet only through the objects they read and write
            [
              'extensions/dns',
              'extensions/network',
              'extensions/provider-local',
              'gardenlet',
              'scheduler',
              'controllermanager',
              'admission',
            ],
            // the local environment `up` and the tests start: etcd, kube-apiserver, BIND9, the binaries
            ['localenv'],
            // the components wired into one process, with the extensions' admission
            ['app'],
            ['cli'],
          ],
        },
      ],
      'layers/no-cycle': ['error', { root: 'src' }],
    },
  },
  {
    // A file is one concept: past 400 lines its header says why it is still one (hack/eslint/file-size.js).
    files: ['src/**/*.ts'],
    plugins: { 'file-size': fileSize },
    rules: { 'file-size/max-lines': ['error', { max: 400 }] },
  },
);
