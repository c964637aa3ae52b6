/* int8 multiply-accumulate peak of this x86 CPU, one instruction sequence at a time, on every thread of an
 * OpenMP team: the ceiling an int8 conv kernel can reach here. Built and run by benchmarks/int8_peak.py.
 *   avx2   vpmaddubsw (32 u8 x s8 products in int16 pairs) + vpmaddwd by ones + vpaddd: the AVX2 path
 *   avx2_wd  vpmaddwd (16 s16 x s16 products in int32 pairs) + vpaddd: the exact AVX2 path (no int16 pair sum
 *          to saturate) of TVM's int8 kernels (runtimes/tvm/vnni.py) on operands widened to s16
 *   vnni   vpdpbusd (AVX512-VNNI, 64 products into int32), only where the CPU has it (-DHAVE_VNNI512)
 *   amx    tdpbusd (AMX-INT8: a 16x64 u8 tile times a 64x16 s8 tile into 16x16 int32, 16,384 products), only
 *          where the CPU has it (-DHAVE_AMX) and Linux lets the process use the tile registers (arch_prctl)
 * Eight independent accumulators hide the latency. The VNNI and AMX loops are C (intrinsics), an empty asm
 * keeping their operands live each iteration so nothing is hoisted; the AVX2 loops are assembly (see there).
 * tests/test_int8_peak.py counts each loop's multiplies in the disassembly against the MACs run() is given. Prints one JSON line per sequence: {"name", "macs", "seconds", "threads"}. */
#include <immintrin.h>
#include <omp.h>
#include <stdio.h>
#ifdef HAVE_AMX
#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#define ITERS 50000000L

static double now(void) { return omp_get_wtime(); }

/* The AVX2 loops are written in assembly: their products do not read the accumulators, and compilers either
 * compute a product written twice once (half the work counted) or, given eight distinct ones, spill accumulators
 * to the stack (gcc -O2 did; the loop then runs at the store-to-load forwarding's pace). Registers: accumulators
 * ymm0-7, activations ymm8-9, weights ymm10-13, ones ymm14 (avx2), products ymm14/15. The operands' values do not
 * change the timing. */
#define INIT_REGISTERS                                                                                        \
  "vpxor %%ymm0, %%ymm0, %%ymm0\n vpxor %%ymm1, %%ymm1, %%ymm1\n vpxor %%ymm2, %%ymm2, %%ymm2\n"         \
  "vpxor %%ymm3, %%ymm3, %%ymm3\n vpxor %%ymm4, %%ymm4, %%ymm4\n vpxor %%ymm5, %%ymm5, %%ymm5\n"         \
  "vpxor %%ymm6, %%ymm6, %%ymm6\n vpxor %%ymm7, %%ymm7, %%ymm7\n"                                       \
  "vpcmpeqw %%ymm8, %%ymm8, %%ymm8\n vpabsw %%ymm8, %%ymm9\n vpaddw %%ymm9, %%ymm9, %%ymm10\n"          \
  "vpaddw %%ymm10, %%ymm9, %%ymm11\n vpaddw %%ymm11, %%ymm9, %%ymm12\n vpaddw %%ymm12, %%ymm9, %%ymm13\n"
#define YMM_CLOBBERS                                                                                      \
  "ymm0", "ymm1", "ymm2", "ymm3", "ymm4", "ymm5", "ymm6", "ymm7", "ymm8", "ymm9", "ymm10", "ymm11", "ymm12", \
      "ymm13", "ymm14", "ymm15", "cc"

static long avx2(void) {
  long n = ITERS;
#define UBSW(a, b, c) "vpmaddubsw %%ymm" b ", %%ymm" a ", %%ymm15\n vpmaddwd %%ymm14, %%ymm15, %%ymm15\n" \
                      "vpaddd %%ymm15, %%ymm" c ", %%ymm" c "\n"
  __asm__ volatile(INIT_REGISTERS "vpsrlw $15, %%ymm8, %%ymm14\n"
                   "1:\n" UBSW("8", "10", "0") UBSW("8", "11", "1") UBSW("8", "12", "2") UBSW("8", "13", "3")
                   UBSW("9", "10", "4") UBSW("9", "11", "5") UBSW("9", "12", "6") UBSW("9", "13", "7")
                   "dec %0\n jnz 1b\n vzeroupper\n"
                   : "+r"(n)
                   :
                   : YMM_CLOBBERS);
  return n;
}

static long avx2_wd(void) {
  long n = ITERS;
#define WD(a, b, c, t) "vpmaddwd %%ymm" b ", %%ymm" a ", %%ymm" t "\n vpaddd %%ymm" t ", %%ymm" c ", %%ymm" c "\n"
  __asm__ volatile(INIT_REGISTERS "1:\n" WD("8", "10", "0", "14") WD("8", "11", "1", "15") WD("8", "12", "2", "14")
                       WD("8", "13", "3", "15") WD("9", "10", "4", "14") WD("9", "11", "5", "15")
                           WD("9", "12", "6", "14") WD("9", "13", "7", "15") "dec %0\n jnz 1b\n vzeroupper\n"
                   : "+r"(n)
                   :
                   : YMM_CLOBBERS);
  return n;
}

#ifdef HAVE_VNNI512
static long vnni(void) {
  __m512i a = _mm512_set1_epi8(3);
  __m512i b0 = _mm512_set1_epi8(1), b1 = _mm512_set1_epi8(2), b2 = _mm512_set1_epi8(3), b3 = _mm512_set1_epi8(4);
  __m512i b4 = _mm512_set1_epi8(5), b5 = _mm512_set1_epi8(6), b6 = _mm512_set1_epi8(7), b7 = _mm512_set1_epi8(8);
  __m512i c0 = _mm512_setzero_si512(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  for (long i = 0; i < ITERS; i++) {
    __asm__ volatile("" : "+v"(a), "+v"(b0), "+v"(b1), "+v"(b2), "+v"(b3), "+v"(b4), "+v"(b5), "+v"(b6), "+v"(b7));
    c0 = _mm512_dpbusd_epi32(c0, a, b0); c1 = _mm512_dpbusd_epi32(c1, a, b1);
    c2 = _mm512_dpbusd_epi32(c2, a, b2); c3 = _mm512_dpbusd_epi32(c3, a, b3);
    c4 = _mm512_dpbusd_epi32(c4, a, b4); c5 = _mm512_dpbusd_epi32(c5, a, b5);
    c6 = _mm512_dpbusd_epi32(c6, a, b6); c7 = _mm512_dpbusd_epi32(c7, a, b7);
  }
  __m512i s = _mm512_add_epi32(_mm512_add_epi32(_mm512_add_epi32(c0, c1), _mm512_add_epi32(c2, c3)),
                               _mm512_add_epi32(_mm512_add_epi32(c4, c5), _mm512_add_epi32(c6, c7)));
  return _mm512_reduce_add_epi32(s);
}
#endif

#ifdef HAVE_AMX
/* Linux hands out the AMX tile data state only on request, once per process (ARCH_REQ_XCOMP_PERM). */
static int amx_permitted(void) { return syscall(SYS_arch_prctl, 0x1023, 18) == 0; }

struct tile_config {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};

static long amx(void) {
  /* Tiles 0-3: int32 accumulators (16 x 16); 4: u8 activations (16 x 64); 5: s8 weights (16 x 64, VNNI-packed). */
  struct tile_config cfg = {0};
  int8_t a[16 * 64], b[16 * 64];
  int32_t c[16 * 16];
  for (int i = 0; i < 16 * 64; i++) a[i] = 3, b[i] = (int8_t)(i % 7);
  cfg.palette = 1;
  for (int t = 0; t < 6; t++) cfg.colsb[t] = 64, cfg.rows[t] = 16;
  _tile_loadconfig(&cfg);
  _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3);
  _tile_loadd(4, a, 64);
  _tile_loadd(5, b, 64);
  for (long i = 0; i < ITERS / 8; i++) {
    _tile_dpbusd(0, 4, 5); _tile_dpbusd(1, 4, 5); _tile_dpbusd(2, 4, 5); _tile_dpbusd(3, 4, 5);
  }
  _tile_stored(0, c, 64);
  _tile_release();
  return c[0];
}
#endif

static void run(const char* name, long (*fn)(void), long macs_per_iter, long iters) {
  volatile long sink = 0;
  int threads = 1;
  double t0 = now();
#pragma omp parallel
  {
#pragma omp single
    threads = omp_get_num_threads();
    sink += fn();
  }
  double seconds = now() - t0;
  printf("{\"name\": \"%s\", \"macs\": %ld, \"seconds\": %.6f, \"threads\": %d}\n", name,
         macs_per_iter * iters * threads, seconds, threads);
  (void)sink;
}

int main(void) {
  run("avx2", avx2, 8 * 32, ITERS);
  run("avx2_wd", avx2_wd, 8 * 16, ITERS);
#ifdef HAVE_VNNI512
  run("vnni", vnni, 8 * 64, ITERS);
#endif
#ifdef HAVE_AMX
  if (amx_permitted()) run("amx", amx, 4 * 16 * 16 * 64, ITERS / 8);
  else printf("{\"name\": \"amx\", \"refused\": true}\n");
#endif
  return 0;
}
