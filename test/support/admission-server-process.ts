/**
 * The admission webhook server alone, in a process of its own (so that a test can put it under a cgroup memory
 * limit and read its memory): `node --import tsx admission-server-process.ts <certFile> <keyFile>`. No seeds exist;
 * all alpha gates are on. Tells its parent (IPC) `{ port }` once it serves; stops when the parent goes away.
 */
import { startAdmissionServer } from '../../src/admission/server.js';
import { featureGates } from '../../src/featuregate/featuregate.js';
import { silentLogger } from '../../src/runtime/log.js';
import { extensionAdmission } from '../../src/app/extension-admission.js';

const [certFile, keyFile] = process.argv.slice(2);
if (!certFile || !keyFile) throw new Error('usage: admission-server-process.ts <certFile> <keyFile>');

const server = await startAdmissionServer({
  tls: { certFile, keyFile },
  host: '::1',
  port: 0,
  gates: featureGates({ IPv6SingleStack: true, DualStack: true }),
  extensionAdmission: extensionAdmission(),
  lookupSeed: async () => undefined,
  logger: silentLogger(),
});
process.send?.({ port: server.port });
process.on('disconnect', () => void server.close({ graceMs: 0 }).then(() => process.exit(0)));
