/**
 * A Kubernetes field path such as `spec.networking.ipFamilies[0]`. Immutable: `child` and `index` return new paths.
 */
export class FieldPath {
  private constructor(private readonly rendered: string) {}

  static root(name: string, ...more: string[]): FieldPath {
    return new FieldPath(joined(name, more));
  }

  child(name: string, ...more: string[]): FieldPath {
    return new FieldPath(joined(this.rendered === '' ? name : `${this.rendered}.${name}`, more));
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

/**
 * `rendered` with `segments` appended as children, in one string and one path object: validation makes paths for
 * every field it checks, an intermediate path object and closure per segment showed in a review's profile.
 */
function joined(rendered: string, segments: readonly string[]): string {
  let path = rendered;
  for (const segment of segments) path = path === '' ? segment : `${path}.${segment}`;
  return path;
}
