/**
 * A Kubernetes field path such as `spec.networking.ipFamilies[0]`. Immutable: `child` and `index` return new paths.
 */
export class FieldPath {
  private constructor(private readonly rendered: string) {}

  static root(name: string, ...more: string[]): FieldPath {
    return more.reduce((path, segment) => path.child(segment), new FieldPath(name));
  }

  child(name: string, ...more: string[]): FieldPath {
    const next = new FieldPath(this.rendered === '' ? name : `${this.rendered}.${name}`);
    return more.reduce((path, segment) => path.child(segment), next);
  }

  index(i: number): FieldPath {
    return new FieldPath(`${this.rendered}[${i}]`);
  }

  key(k: string): FieldPath {
    return new FieldPath(`${this.rendered}[${k}]`);
  }

  toString(): string {
    return this.rendered;
  }
}
