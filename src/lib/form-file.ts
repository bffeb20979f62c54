/**
 * A file sent in a request body (a multipart file part, or a data URL): its bytes as a view of the body it came
 * in, never copied (http/multipart.ts). It stands where a `File` would; a 12-megapixel photo copied twice more on
 * the way to R2 cost a fifth of its upload's CPU (bench/README.md).
 */
export class FormFile {
  constructor(
    readonly name: string,
    readonly type: string,
    private readonly data: Uint8Array,
  ) {}

  get size(): number {
    return this.data.byteLength;
  }

  /** The bytes themselves (not a copy: do not change them). */
  bytes(): Uint8Array {
    return this.data;
  }

  text(): string {
    return new TextDecoder().decode(this.data);
  }
}
