// A number of bytes as a person reads it: "640 bytes", "12.4 kB", "3.1 MB" (decimal
// units, as file managers and browsers show a download's size).
const UNITS = ["kB", "MB", "GB"];

export function byteSize(bytes) {
  if (bytes < 1000) return bytes === 1 ? "1 byte" : `${bytes} bytes`;
  let value = bytes;
  let unit = -1;
  do {
    value /= 1000;
    unit += 1;
  } while (value >= 999.95 && unit < UNITS.length - 1);
  return `${value.toFixed(1)} ${UNITS[unit]}`;
}
