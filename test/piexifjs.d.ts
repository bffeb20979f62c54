/** piexifjs ships no types: what the tests use of it (EXIF fixtures). */
declare module "piexifjs" {
  const piexif: {
    dump(exif: Record<string, Record<number, unknown>>): string;
    insert(exif: string, jpeg: string): string;
    ImageIFD: Record<string, number>;
    ExifIFD: Record<string, number>;
    GPSIFD: Record<string, number>;
  };
  export default piexif;
}
