// The protobuf wire reader of ONNX files, one for the host and the view: the host slims a model with it
// (client/editors/slimOnnx.ts), the webview decodes the graph with it (webview/importers/onnxWire.ts). Reads are
// bounded by the end of the message they are in and throw OnnxWireError past it; the varint readers are unrolled
// on purpose (a one-byte value returns first), as they run once per field of a model of millions of fields.
import { read as utf8 } from 'protobufjs/src/util/utf8.js';

/** The file is not a well-formed ModelProto; the message says what was wrong and where. */
export class OnnxWireError extends Error {
  /** `offset`: the byte where the reader found the problem, when a read found it. */
  constructor(
    message: string,
    readonly offset?: number,
  ) {
    super(message);
  }
}

const TWO_32 = 4294967296;

/** A read position in the model's bytes; every read is bounded by the end of the message it is in. */
export class WireReader {
  pos = 0;
  /** The low and high 32 bits of the last varint read. */
  private lo = 0;
  private hi = 0;

  /** Names the message being read (`model.graph.initializer[3]`) in errors, when the caller keeps track of it. */
  where: (() => string) | undefined;

  constructor(readonly buf: Uint8Array) {}

  fail(what: string): never {
    const where = this.where?.();
    throw new OnnxWireError(
      `This is not a valid ONNX file: ${what} at byte ${this.pos}${where ? `, in ${where}` : ''}.`,
      this.pos,
    );
  }

  /** Reads a varint (up to 10 bytes) into lo/hi. */
  private varint(end: number): void {
    const buf = this.buf;
    let p = this.pos;
    let lo = 0;
    let b: number;
    for (let i = 0; i < 4; i++) {
      if (p >= end) this.fail('a number runs past its message');
      b = buf[p++];
      lo |= (b & 0x7f) << (7 * i);
      if (b < 0x80) {
        this.pos = p;
        this.lo = lo >>> 0;
        this.hi = 0;
        return;
      }
    }
    if (p >= end) this.fail('a number runs past its message');
    b = buf[p++];
    lo |= (b & 0x7f) << 28;
    let hi = (b & 0x7f) >> 4;
    if (b >= 0x80) {
      for (let i = 0; ; i++) {
        if (i === 5) this.fail('a number is longer than 10 bytes');
        if (p >= end) this.fail('a number runs past its message');
        b = buf[p++];
        hi |= (b & 0x7f) << (7 * i + 3);
        if (b < 0x80) break;
      }
    }
    this.pos = p;
    this.lo = lo >>> 0;
    this.hi = hi >>> 0;
  }

  /** A varint's low 32 bits, unsigned (keys and lengths, as protobufjs reads them). */
  uint32(end: number): number {
    const p = this.pos;
    if (p < end) {
      const b = this.buf[p];
      if (b < 0x80) {
        this.pos = p + 1;
        return b;
      }
    }
    this.varint(end);
    return this.lo;
  }

  int32(end: number): number {
    return this.uint32(end) | 0;
  }

  /** A signed 64-bit varint as the nearest number (as protobufjs' Long.toNumber). */
  int64(end: number): number {
    const p = this.pos;
    if (p < end) {
      const b = this.buf[p];
      if (b < 0x80) {
        this.pos = p + 1;
        return b;
      }
    }
    this.varint(end);
    const { lo, hi } = this;
    if (hi >>> 31) {
      const l = (~lo + 1) >>> 0;
      let h = ~hi >>> 0;
      if (!l) h = (h + 1) >>> 0;
      return -(l + h * TWO_32);
    }
    return lo + hi * TWO_32;
  }

  float32(end: number): number {
    if (this.pos + 4 > end) this.fail('a float runs past its message');
    const b = this.buf;
    const p = this.pos;
    this.pos = p + 4;
    scratch32[0] = b[p] | (b[p + 1] << 8) | (b[p + 2] << 16) | (b[p + 3] << 24);
    return scratchF32[0];
  }

  float64(end: number): number {
    if (this.pos + 8 > end) this.fail('a double runs past its message');
    scratchBytes.set(this.buf.subarray(this.pos, this.pos + 8));
    this.pos += 8;
    return scratchF64[0];
  }

  /** Reads a length and returns where the field's data ends. */
  end(end: number): number {
    const length = this.uint32(end);
    const e = this.pos + length;
    if (e > end) this.fail('a field runs past its message');
    return e;
  }

  string(end: number): string {
    const e = this.end(end);
    const s = utf8(this.buf, this.pos, e);
    this.pos = e;
    return s;
  }

  skip(wire: number, end: number): void {
    if (wire === 0) this.varint(end);
    else if (wire === 2) this.pos = this.end(end);
    else if (wire === 1 || wire === 5) {
      const e = this.pos + (wire === 1 ? 8 : 4);
      if (e > end) this.fail('a field runs past its message');
      this.pos = e;
    } else this.fail(`wire type ${wire} is not used by ONNX`);
  }

  /** The next field's key; throws on field number 0. */
  key(end: number): number {
    const start = this.pos;
    const key = this.uint32(end);
    if (key >>> 3 === 0) {
      this.pos = start;
      this.fail('field number 0');
    }
    return key;
  }
}

// Little-endian float reads without a DataView per read (the platforms we run on are little-endian).
const scratchBytes = new Uint8Array(8);
const scratch32 = new Int32Array(scratchBytes.buffer, 0, 1);
const scratchF32 = new Float32Array(scratchBytes.buffer, 0, 1);
const scratchF64 = new Float64Array(scratchBytes.buffer);
