/**
 * The CloudProfiles of a command's input, for the Shoots after them: without a cluster, the input is the garden.
 * Read in order, as `kubectl apply -f` creates objects: a CloudProfile counts for the Shoots that follow it (one
 * that came after a Shoot naming it is reported, since that Shoot was judged without it). While the input has given
 * no CloudProfile, Shoots are neither defaulted from nor checked against one; once it has, a Shoot naming another
 * is refused as the API server would (`spec.cloudProfile.name: Not found`).
 */
import { cloudProfileReference } from '../apis/core/v1beta1/helpers.js';
import { CloudProfiles, lookupKind, Shoots } from '../apis/registry.js';
import type { SourcedDocument } from './documents.js';
import type { CliIO } from './io.js';

export class InputCloudProfiles {
  private readonly byName = new Map<string, unknown>();
  /** CloudProfile name → the first Shoot that named it while no CloudProfile was known. */
  private readonly namedBefore = new Map<string, string>();

  constructor(private readonly io: CliIO) {}

  /**
   * The CloudProfiles to admit `document` with (`AdmissionInput.cloudProfiles`); undefined while the input has given
   * none.
   */
  for(document: SourcedDocument): ((name: string) => unknown) | undefined {
    if (this.byName.size > 0) return (name) => this.byName.get(name);
    const name = lookupKind(document.object) === Shoots ? cloudProfileReference(document.object)?.name : undefined;
    if (name !== undefined && !this.namedBefore.has(name)) this.namedBefore.set(name, where(document));
    return undefined;
  }

  /** Counts `document` from now on when it is a CloudProfile the API server would have stored (`stored`). */
  add(document: SourcedDocument, stored: boolean): void {
    if (!stored || lookupKind(document.object) !== CloudProfiles) return;
    const name = (document.object as { metadata?: { name?: unknown } }).metadata?.name;
    if (typeof name !== 'string') return;
    this.byName.set(name, document.object);
    const shoot = this.namedBefore.get(name);
    if (shoot !== undefined) {
      this.io.err(
        `warning: ${where(document)}: CloudProfile ${JSON.stringify(name)} comes after ${shoot}, a Shoot that names ` +
          'it and was not checked against it: put CloudProfiles before the Shoots\n',
      );
      this.namedBefore.delete(name);
    }
  }
}

function where(document: SourcedDocument): string {
  return `${document.source}: object ${document.index + 1}`;
}
