/**
 * YAML as kubectl and the API server read it: sigs.k8s.io/yaml decodes with go-yaml v2, which implements YAML 1.1.
 * `yes`, `no`, `on`, `off`, `y` and `n` (in their capitalizations) are booleans, `0777` is octal, `1_000` is 1000,
 * `0o17` is octal too (go-yaml v2 parses ints with Go's base prefixes). Unlike YAML 1.1's full schema, go-yaml v2 has
 * no sexagesimal numbers (`1:20` stays a string) and hands timestamps to JSON as the strings they are.
 */
import {
  stringify,
  type DocumentOptions,
  type ParseOptions,
  type ScalarTag,
  type SchemaOptions,
  type Tags,
} from 'yaml';

/** `0o17`, `-0o7_7`: an int to go-yaml v2 (Go's strconv.ParseInt with base 0), a string to YAML 1.1. */
const goOctal: ScalarTag = {
  identify: (value) => typeof value === 'number' && Number.isInteger(value),
  default: true,
  tag: 'tag:yaml.org,2002:int',
  format: 'OCT',
  test: /^[-+]?0o[0-7_]+$/,
  resolve: (source) => {
    const negative = source.startsWith('-');
    const digits = source.replace(/^[-+]?0o/, '').replace(/_/g, '');
    const value = parseInt(digits, 8);
    return negative ? -value : value;
  },
};

function goYAMLv2Tags(tags: Tags): Tags {
  const kept = tags.filter((tag) => {
    if (typeof tag === 'string') return true;
    // Sexagesimal ints and floats (`format: 'TIME'`) and timestamps: strings to go-yaml v2.
    return tag.format !== 'TIME' && tag.tag !== 'tag:yaml.org,2002:timestamp';
  });
  return [goOctal, ...kept];
}

/** Options for the `yaml` package that read what kubectl reads. */
export const KUBECTL_YAML_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.1',
  customTags: goYAMLv2Tags,
  uniqueKeys: true,
};

/**
 * `value` as YAML that kubectl reads back as the same value: strings that YAML 1.1 would take for something else
 * (`yes`, `on`, `0777`) are quoted.
 */
export function stringifyForKubectl(value: unknown): string {
  return stringify(value, { version: '1.1', customTags: goYAMLv2Tags, lineWidth: 0 });
}
