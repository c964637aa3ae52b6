/* int8 multiply-accumulate peak of this x86 CPU, one instruction sequence at a time, on every thread of an
 * OpenMP team: the ceiling an int8 conv kernel can reach here. Built and run by benchmarks/int8_peak.py.
 *   avx2   vpmaddubsw (32 u8 x s8 products in int16 pairs) + vpmaddwd by ones + vpaddd: the AVX2 path
 *   avx2_wd  vpmaddwd (16 s16 x s16 products in int32 pairs) + vpaddd: the exact AVX2 path (no int16 pair sum
 *          to saturate) of TVM's int8 kernels (runtimes/tvm/vnni.py) on operands widened to s16
 *   vnni   vpdpbusd (AVX512-VNNI, 64 products into int32), only where the CPU has it (-DHAVE_VNNI512)
 *   amx    tdpbusd (AMX-INT8: a 16x64 u8 tile times a 64x16 s8 tile into 16x16 int32, 16,384 products), only
 *          where the CPU has it (-DHAVE_AMX) and Linux lets the process use the tile registers (arch_prctl)
 * Eight independent accumulators hide the latency; an empty asm keeps the operands live each iteration
 * so nothing is hoisted. The AVX2 sequences hold their accumulators and operands in 14 of the 16 ymm registers
 * (more would spill them to the stack, and the peak would be the store-to-load forwarding's). Prints one JSON line per sequence: {"name", "macs", "seconds", "threads"}. */
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

static long avx2(void) {
  __m256i a = _mm256_set1_epi8(3), ones = _mm256_set1_epi16(1);
  __m256i b0 = _mm256_set1_epi8(1), b1 = _mm256_set1_epi8(2), b2 = _mm256_set1_epi8(3), b3 = _mm256_set1_epi8(4);
  __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  for (long i = 0; i < ITERS; i++) {
    __asm__ volatile("" : "+x"(a), "+x"(b0), "+x"(b1), "+x"(b2), "+x"(b3));
#define STEP(c, b) c = _mm256_add_epi32(c, _mm256_madd_epi16(_mm256_maddubs_epi16(a, b), ones))
    STEP(c0, b0); STEP(c1, b1); STEP(c2, b2); STEP(c3, b3); STEP(c4, b0); STEP(c5, b1); STEP(c6, b2); STEP(c7, b3);
  }
  __m256i s = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(c0, c1), _mm256_add_epi32(c2, c3)),
                               _mm256_add_epi32(_mm256_add_epi32(c4, c5), _mm256_add_epi32(c6, c7)));
  return _mm256_extract_epi32(s, 0);
}

static long avx2_wd(void) {
  __m256i a = _mm256_set1_epi16(3);
  __m256i b0 = _mm256_set1_epi16(1), b1 = _mm256_set1_epi16(2), b2 = _mm256_set1_epi16(3), b3 = _mm256_set1_epi16(4);
  __m256i c0 = _mm256_setzero_si256(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  for (long i = 0; i < ITERS; i++) {
    __asm__ volatile("" : "+x"(a), "+x"(b0), "+x"(b1), "+x"(b2), "+x"(b3));
#define STEP_WD(c, b) c = _mm256_add_epi32(c, _mm256_madd_epi16(a, b))
    STEP_WD(c0, b0); STEP_WD(c1, b1); STEP_WD(c2, b2); STEP_WD(c3, b3);
    STEP_WD(c4, b0); STEP_WD(c5, b1); STEP_WD(c6, b2); STEP_WD(c7, b3);
  }
  __m256i s = _mm256_add_epi32(_mm256_add_epi32(_mm256_add_epi32(c0, c1), _mm256_add_epi32(c2, c3)),
                               _mm256_add_epi32(_mm256_add_epi32(c4, c5), _mm256_add_epi32(c6, c7)));
  return _mm256_extract_epi32(s, 0);
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
