/**
 * A setup file of the `integration` project: its files run one at a time, each holding a lock for its whole run.
 * Each starts its own seed Nodes and shoots, and two at once on a 2-core machine would slow each other beyond their
 * deadlines. The project shares a vitest group (and so its worker count, two) with the kind seed's e2e, which mostly
 * waits on Docker: the kind file runs beside the integration files, which take turns through this lock.
 */
import { afterAll } from 'vitest';
import { join } from 'node:path';
import { projectRoot } from '../../src/system/project.js';
import { acquireFileLock } from './file-lock.js';

const started = Date.now();
const release = await acquireFileLock(join(projectRoot(), '.cache', 'integration-files.lock'));
const waited = Date.now() - started;
if (waited > 1_000) process.stderr.write(`[one file at a time] waited ${Math.round(waited / 1000)}s for the lock\n`);
afterAll(release);
