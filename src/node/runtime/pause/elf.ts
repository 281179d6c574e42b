/**
 * The sandbox ("pause") program Stowage ships, written here as a static x86-64 Linux ELF so that
 * no pod needs the internet for its sandbox (k3s ships its own pause image for the same reason).
 * Like the kubelet's pause: SIGTERM and SIGINT end it with status 0; SIGCHLD is ignored, which on
 * Linux makes the kernel reap any child re-parented to it (it is PID 1 of the pod); otherwise it
 * sleeps in pause(2) forever. About 200 bytes, no libc.
 */

const LOAD_ADDRESS = 0x400000;
const ELF_HEADER = 64;
const PROGRAM_HEADER = 56;

// Linux x86-64 syscall numbers and constants.
const SYS_RT_SIGACTION = 13;
const SYS_PAUSE = 34;
const SYS_EXIT_GROUP = 231;
const SIGINT = 2;
const SIGTERM = 15;
const SIGCHLD = 17;
const SIG_IGN = 1n;
// x86-64 delivers a handled signal only with a restorer; ours never returns, so any address does.
const SA_RESTORER = 0x04000000n;

const u32 = (n: number): number[] => [n & 0xff, (n >>> 8) & 0xff, (n >>> 16) & 0xff, (n >>> 24) & 0xff];

/** The code, with rip-relative references to the two sigaction structs after it. */
function program(codeStart: number): Uint8Array {
  const code: number[] = [];
  const fixups: Array<{ at: number; target: 'act' | 'ign' }> = [];
  const sigaction = (signal: number, target: 'act' | 'ign'): void => {
    code.push(0xb8, ...u32(SYS_RT_SIGACTION)); // mov eax, 13
    code.push(0xbf, ...u32(signal)); // mov edi, signal
    code.push(0x48, 0x8d, 0x35); // lea rsi, [rip + rel32]
    fixups.push({ at: code.length, target });
    code.push(0, 0, 0, 0);
    code.push(0x31, 0xd2); // xor edx, edx (no old action)
    code.push(0x41, 0xba, ...u32(8)); // mov r10d, 8 (sigset size)
    code.push(0x0f, 0x05); // syscall
  };
  sigaction(SIGTERM, 'act');
  sigaction(SIGINT, 'act');
  sigaction(SIGCHLD, 'ign');
  code.push(0xb8, ...u32(SYS_PAUSE), 0x0f, 0x05, 0xeb, 0xf7); // loop: mov eax, 34; syscall; jmp loop
  const handler = codeStart + code.length;
  code.push(0x31, 0xff, 0xb8, ...u32(SYS_EXIT_GROUP), 0x0f, 0x05); // xor edi, edi; mov eax, 231; syscall
  while (code.length % 8 !== 0) code.push(0xcc);
  const data = (handlerAddr: bigint, flags: bigint, restorer: bigint): number[] => {
    const b = Buffer.alloc(32); // struct sigaction: handler, flags, restorer, mask
    b.writeBigUInt64LE(handlerAddr, 0);
    b.writeBigUInt64LE(flags, 8);
    b.writeBigUInt64LE(restorer, 16);
    return [...b];
  };
  const offsets = { act: code.length, ign: code.length + 32 };
  code.push(...data(BigInt(handler), SA_RESTORER, BigInt(handler)), ...data(SIG_IGN, 0n, 0n));
  const out = Uint8Array.from(code);
  const view = new DataView(out.buffer);
  for (const f of fixups) view.setInt32(f.at, offsets[f.target] - (f.at + 4), true);
  return out;
}

/** The pause program: a complete static ELF executable for linux/amd64. */
export function pauseElf(): Buffer {
  const codeStart = LOAD_ADDRESS + ELF_HEADER + PROGRAM_HEADER;
  const body = program(codeStart);
  const size = ELF_HEADER + PROGRAM_HEADER + body.length;
  const b = Buffer.alloc(size);
  b.set([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0], 0); // ELF, 64-bit, little-endian, version 1, SysV
  b.writeUInt16LE(2, 16); // ET_EXEC
  b.writeUInt16LE(0x3e, 18); // x86-64
  b.writeUInt32LE(1, 20);
  b.writeBigUInt64LE(BigInt(codeStart), 24); // entry
  b.writeBigUInt64LE(BigInt(ELF_HEADER), 32); // program headers
  b.writeUInt16LE(ELF_HEADER, 52);
  b.writeUInt16LE(PROGRAM_HEADER, 54);
  b.writeUInt16LE(1, 56); // one program header
  b.writeUInt16LE(64, 58); // section header entry size (none present)
  const ph = ELF_HEADER;
  b.writeUInt32LE(1, ph); // PT_LOAD
  b.writeUInt32LE(5, ph + 4); // R + X
  b.writeBigUInt64LE(0n, ph + 8); // from file offset 0
  b.writeBigUInt64LE(BigInt(LOAD_ADDRESS), ph + 16);
  b.writeBigUInt64LE(BigInt(LOAD_ADDRESS), ph + 24);
  b.writeBigUInt64LE(BigInt(size), ph + 32);
  b.writeBigUInt64LE(BigInt(size), ph + 40);
  b.writeBigUInt64LE(0x1000n, ph + 48);
  b.set(body, ELF_HEADER + PROGRAM_HEADER);
  return b;
}
