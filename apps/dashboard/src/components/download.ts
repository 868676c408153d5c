/** Starts a download of `blob` as a file named `name`, from the page (a blob URL, no round trip). */
export function saveFile(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  link.click();
  // Freed later rather than at once: the download reads the blob after click() returns.
  window.setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
