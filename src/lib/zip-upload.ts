/**
 * A zip written into an R2 object file by file, piece by piece (fflate's streaming `Zip`): what is held in memory
 * is the piece being compressed and at most one part of output, whatever the archive's size. Output past `PART`
 * bytes goes up as a multipart upload of equal parts (R2 wants every part but the last the same size, 5 MiB at
 * least); an archive smaller than one part is one plain put.
 */
import { Zip, ZipDeflate, strToU8 } from "fflate";

/** Bytes per uploaded part. */
export const PART = 5 * 1024 * 1024;

export class ZipUpload {
  /** Bytes of the archive so far. */
  size = 0;
  private readonly zip: Zip;
  private out: Uint8Array[] = [];
  private outBytes = 0;
  private failure: Error | null = null;
  private upload: R2MultipartUpload | null = null;
  private parts: R2UploadedPart[] = [];

  constructor(
    private readonly bucket: R2Bucket,
    private readonly key: string,
    private readonly options: R2PutOptions,
    private readonly level: 6 | 0 = 6,
  ) {
    this.zip = new Zip((err, chunk) => {
      if (err) this.failure = err;
      else (this.out.push(chunk), (this.outBytes += chunk.length), (this.size += chunk.length));
    });
  }

  /** Adds one file, its text given piece by piece by `write` (each piece compressed and sent before the next). */
  async file(name: string, write: (piece: (text: string) => Promise<void>) => Promise<void>): Promise<void> {
    const entry = new ZipDeflate(name, { level: this.level });
    this.zip.add(entry);
    await write(async (text) => {
      entry.push(strToU8(text));
      await this.send();
    });
    entry.push(new Uint8Array(0), true);
    await this.send();
  }

  /** Ends the archive and stores what is left; answers its size. */
  async finish(): Promise<number> {
    this.zip.end();
    await this.send();
    const rest = this.take(this.outBytes);
    if (!this.upload) await this.bucket.put(this.key, rest, this.options);
    else {
      this.parts.push(await this.upload.uploadPart(this.parts.length + 1, rest));
      await this.upload.complete(this.parts);
    }
    return this.size;
  }

  /** Drops an unfinished upload's parts (after a failure). */
  async abort(): Promise<void> {
    await this.upload?.abort().catch(() => undefined);
  }

  /** Uploads every whole part the output holds. */
  private async send(): Promise<void> {
    if (this.failure) throw this.failure;
    while (this.outBytes >= PART) {
      this.upload ??= await this.bucket.createMultipartUpload(this.key, this.options);
      this.parts.push(await this.upload.uploadPart(this.parts.length + 1, this.take(PART)));
    }
  }

  /** The first `n` bytes of the output, removed from it. */
  private take(n: number): Uint8Array {
    const part = new Uint8Array(n);
    let at = 0;
    while (at < n) {
      const chunk = this.out[0]!;
      const used = Math.min(chunk.length, n - at);
      part.set(chunk.subarray(0, used), at);
      at += used;
      if (used === chunk.length) this.out.shift();
      else this.out[0] = chunk.subarray(used);
    }
    this.outBytes -= n;
    return part;
  }
}
