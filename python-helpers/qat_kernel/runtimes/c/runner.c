/* @STEM@_runner.c: runs the INT8 network described in @STEM@_qparams.h on float32 inputs.
 * Plain C99 and libm; no TVM, no allocation (one static int32 arena holds every live tensor).
 *
 *   @STEM@_runner INPUT OUTPUT [TRACE [REPLAY]]
 *     INPUT   N x C x H x W float32 values (NCHW, this machine's byte order); N = file size / (4*C*H*W)
 *     OUTPUT  N x QAT_OUTPUT_SIZE float32 values (the logits)
 *     TRACE   optional: per sample, each layer's quantized output as int32 values, in layer order
 *     REPLAY  optional, laid out as TRACE: reference values (PyTorch's) that replace each layer's
 *             output once it is traced, so every layer is checked on the reference's own inputs
 *
 * Arithmetic follows PyTorch's INT8 reference model (torchao PT2E, converted: dequantize -> float op
 * -> quantize): the input is quantized with round-half-to-even of x * (1/scale); conv2d/linear
 * accumulate (q_x - zp_x) * (q_w - zp_w) in int32, then y = acc * (input scale x weight scale) + float
 * bias [+ the dequantized residual], and requantize to the next layer's scale and zero point, the
 * relu/hardtanh clamp applied in the quantized domain (folded into out_qmin/out_qmax). add, pooling
 * and concat dequantize their inputs to float, compute as PyTorch does, and requantize. Build with
 *   cc -std=c99 -O2 -ffp-contract=off -o @STEM@_runner @STEM@_runner.c -lm
 * (-ffp-contract=off: a fused multiply-add rounds differently from PyTorch's separate multiply and add).
 * -DQAT_INTEGER_BIAS adds the int32 bias to the accumulator instead, as integer-only kernels
 * (ONNX Runtime's QLinearConv, TVM's int8 fold) do: results then match those, not PyTorch. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "@STEM@_qparams.h"

static int32_t arena[QAT_ARENA_SIZE];

static int32_t quantize(float y, float inv_scale, int32_t zero_point, int32_t qmin, int32_t qmax)
{
    /* rintf rounds half to even in the default rounding mode, as torch.round does */
    float r = rintf(y * inv_scale) + (float)zero_point;
    if (r < (float)qmin) return qmin;
    if (r > (float)qmax) return qmax;
    return (int32_t)r;
}

/* Input k's value q as PyTorch's dequantize computes it: (q - zero_point) * scale in float32. */
static float dequantize(const qat_layer *L, int k, int32_t q)
{
    return (float)(q - L->in_zero_point[k]) * L->in_scale[k];
}

/* The layer's output value i: quantized (activation clamp in out_qmin/out_qmax) or the float logit. */
static void store(const qat_layer *L, float y, long i, float *f_out)
{
    if (L->quantized_output) {
        arena[L->output + i] = quantize(y, L->out_inv_scale, L->out_zero_point, L->out_qmin, L->out_qmax);
    } else {
        if (y < L->act_min) y = L->act_min;
        if (y > L->act_max) y = L->act_max;
        f_out[i] = y;
    }
}

/* PyTorch's float sum of n values (a global average pool), in its vectorised order: value j into
 * lane j % 8 while whole groups of 8 remain, the lanes then added in turn, the remainder last. */
#define QAT_SUM_LANES 8
typedef struct {
    float lanes[QAT_SUM_LANES], rest[QAT_SUM_LANES];
    long n, whole;
} qat_sum;

static void sum_start(qat_sum *s, long n)
{
    int j;
    for (j = 0; j < QAT_SUM_LANES; ++j) s->lanes[j] = s->rest[j] = 0.0f;
    s->n = n;
    s->whole = n - n % QAT_SUM_LANES;
}

static void sum_add(qat_sum *s, long i, float v)
{
    if (i < s->whole) s->lanes[i % QAT_SUM_LANES] += v;
    else s->rest[i - s->whole] = v;
}

static float sum_mean(const qat_sum *s)
{
    float sum = 0.0f;
    long j;
    if (s->whole > 0)
        for (j = 0; j < QAT_SUM_LANES; ++j) sum += s->lanes[j];
    for (j = 0; j < s->n - s->whole; ++j) sum += s->rest[j];
    return sum / (float)s->n;
}

/* One output value of a conv2d/linear layer from its int32 accumulator (+ the fused residual). */
static float conv_value(const qat_layer *L, int oc, int32_t acc, long i)
{
    float y;
#ifdef QAT_INTEGER_BIAS
    y = (float)(acc + L->bias_int32[oc]) * L->acc_scale[oc];
#else
    y = (float)acc * L->acc_scale[oc];
    y = y + L->bias[oc];
#endif
    if (L->n_inputs > 1) y = y + dequantize(L, 1, arena[L->input[1] + i]);
    return y;
}

/* conv2d, grouped and depthwise included (groups = in_c: one input channel per output channel). */
static void conv2d(const qat_layer *L, float *f_out)
{
    const int32_t *x = arena + L->input[0];
    const int cin = L->in_c / L->groups, cout = L->out_c / L->groups;
    int oc, oh, ow, ic, kh, kw;
    for (oc = 0; oc < L->out_c; ++oc) {
        const int g = oc / cout;
        const int32_t wz = L->weight_zero_point[oc];
        qat_sum pool;
        sum_start(&pool, (long)L->out_h * L->out_w);
        for (oh = 0; oh < L->out_h; ++oh) {
            for (ow = 0; ow < L->out_w; ++ow) {
                int32_t acc = 0;
                for (ic = 0; ic < cin; ++ic) {
                    const int c = g * cin + ic;
                    for (kh = 0; kh < L->kernel_h; ++kh) {
                        const int ih = oh * L->stride_h - L->pad_h + kh * L->dilation_h;
                        if (ih < 0 || ih >= L->in_h) continue; /* zero padding = the zero point */
                        for (kw = 0; kw < L->kernel_w; ++kw) {
                            const int iw = ow * L->stride_w - L->pad_w + kw * L->dilation_w;
                            int32_t xv, wv;
                            if (iw < 0 || iw >= L->in_w) continue;
                            xv = x[((long)c * L->in_h + ih) * L->in_w + iw] - L->in_zero_point[0];
                            wv = (int32_t)L->weight[(((long)oc * cin + ic) * L->kernel_h + kh) * L->kernel_w + kw] - wz;
                            acc += xv * wv;
                        }
                    }
                }
                {
                    const long i = ((long)oc * L->out_h + oh) * L->out_w + ow;
                    float y = conv_value(L, oc, acc, i);
                    if (!L->global_pool) {
                        store(L, y, i, f_out);
                        continue;
                    }
                    if (y < L->act_min) y = L->act_min;
                    if (y > L->act_max) y = L->act_max;
                    sum_add(&pool, (long)oh * L->out_w + ow, y);
                }
            }
        }
        if (L->global_pool) store(L, sum_mean(&pool), oc, f_out);
    }
}

static void linear(const qat_layer *L, float *f_out)
{
    const int32_t *x = arena + L->input[0];
    int o, i;
    for (o = 0; o < L->out_c; ++o) {
        const int32_t wz = L->weight_zero_point[o];
        int32_t acc = 0;
        for (i = 0; i < L->in_c; ++i)
            acc += (x[i] - L->in_zero_point[0]) * ((int32_t)L->weight[(long)o * L->in_c + i] - wz);
        store(L, conv_value(L, o, acc, o), o, f_out);
    }
}

/* Elementwise add of two quantized tensors with their own scales, requantized to the output scale. */
static void add(const qat_layer *L, float *f_out)
{
    const int32_t *a = arena + L->input[0], *b = arena + L->input[1];
    long i, count = (long)L->out_c * L->out_h * L->out_w;
    for (i = 0; i < count; ++i) store(L, dequantize(L, 0, a[i]) + dequantize(L, 1, b[i]), i, f_out);
}

static void maxpool2d(const qat_layer *L, float *f_out)
{
    const int32_t *x = arena + L->input[0];
    int c, oh, ow, kh, kw;
    for (c = 0; c < L->out_c; ++c)
        for (oh = 0; oh < L->out_h; ++oh)
            for (ow = 0; ow < L->out_w; ++ow) {
                int32_t best = INT32_MIN;
                for (kh = 0; kh < L->kernel_h; ++kh) {
                    const int ih = oh * L->stride_h - L->pad_h + kh * L->dilation_h;
                    if (ih < 0 || ih >= L->in_h) continue; /* max pooling pads with -inf */
                    for (kw = 0; kw < L->kernel_w; ++kw) {
                        const int iw = ow * L->stride_w - L->pad_w + kw * L->dilation_w;
                        int32_t v;
                        if (iw < 0 || iw >= L->in_w) continue;
                        v = x[((long)c * L->in_h + ih) * L->in_w + iw];
                        if (v > best) best = v;
                    }
                }
                /* the max of dequantized values is the dequantized max: scales are positive */
                store(L, dequantize(L, 0, best), ((long)c * L->out_h + oh) * L->out_w + ow, f_out);
            }
}

/* avg_pool2d as PyTorch's CPU kernel: the window's dequantized values summed in order, divided by
 * the window size (counting the padding when count_include_pad). */
static void avgpool2d(const qat_layer *L, float *f_out)
{
    const int32_t *x = arena + L->input[0];
    int c, oh, ow, ih, iw;
    for (c = 0; c < L->out_c; ++c)
        for (oh = 0; oh < L->out_h; ++oh)
            for (ow = 0; ow < L->out_w; ++ow) {
                int h0 = oh * L->stride_h - L->pad_h, w0 = ow * L->stride_w - L->pad_w;
                int h1 = h0 + L->kernel_h, w1 = w0 + L->kernel_w, divisor;
                float sum = 0.0f;
                if (h1 > L->in_h + L->pad_h) h1 = L->in_h + L->pad_h;
                if (w1 > L->in_w + L->pad_w) w1 = L->in_w + L->pad_w;
                divisor = (h1 - h0) * (w1 - w0);
                if (h0 < 0) h0 = 0;
                if (w0 < 0) w0 = 0;
                if (h1 > L->in_h) h1 = L->in_h;
                if (w1 > L->in_w) w1 = L->in_w;
                if (!L->count_include_pad) divisor = (h1 - h0) * (w1 - w0);
                for (ih = h0; ih < h1; ++ih)
                    for (iw = w0; iw < w1; ++iw) sum += dequantize(L, 0, x[((long)c * L->in_h + ih) * L->in_w + iw]);
                store(L, sum / (float)divisor, ((long)c * L->out_h + oh) * L->out_w + ow, f_out);
            }
}

/* adaptive_avg_pool2d to 1x1 and mean over H, W of dequantized values (PyTorch's summation order). */
static void globalavgpool(const qat_layer *L, float *f_out)
{
    const long n = (long)L->in_h * L->in_w;
    int c;
    for (c = 0; c < L->out_c; ++c) {
        const int32_t *x = arena + L->input[0] + (long)c * n;
        qat_sum s;
        long i;
        sum_start(&s, n);
        for (i = 0; i < n; ++i) sum_add(&s, i, dequantize(L, 0, x[i]));
        store(L, sum_mean(&s), c, f_out);
    }
}

/* flatten and concat along channels: each input requantized to the output's scale. */
static void concat(const qat_layer *L, float *f_out)
{
    long at = 0, i;
    int k;
    for (k = 0; k < L->n_inputs; ++k) {
        const int32_t *x = arena + L->input[k];
        const long count = (long)L->in_channels[k] * L->out_h * L->out_w;
        for (i = 0; i < count; ++i) store(L, dequantize(L, k, x[i]), at + i, f_out);
        at += count;
    }
}

int main(int argc, char **argv)
{
    FILE *in, *out, *trace = NULL, *replay = NULL;
    float x[QAT_INPUT_SIZE], logits[QAT_OUTPUT_SIZE];
    long n, bytes, s;
    int l;
    if (argc < 3 || argc > 5) {
        fprintf(stderr, "usage: %s INPUT.f32 OUTPUT.f32 [TRACE.i32 [REPLAY.i32]]\n", argv[0]);
        return 2;
    }
    in = fopen(argv[1], "rb");
    if (!in) { perror(argv[1]); return 1; }
    if (fseek(in, 0, SEEK_END) != 0 || (bytes = ftell(in)) < 0 || fseek(in, 0, SEEK_SET) != 0) {
        perror(argv[1]);
        return 1;
    }
    if (bytes % (long)sizeof x != 0) {
        fprintf(stderr, "%s: %ld bytes is not a whole number of %d x %d x %d float32 inputs\n", argv[1], bytes,
                QAT_INPUT_C, QAT_INPUT_H, QAT_INPUT_W);
        return 1;
    }
    n = bytes / (long)sizeof x;
    out = fopen(argv[2], "wb");
    if (!out) { perror(argv[2]); return 1; }
    if (argc >= 4 && !(trace = fopen(argv[3], "wb"))) { perror(argv[3]); return 1; }
    if (argc == 5 && !(replay = fopen(argv[4], "rb"))) { perror(argv[4]); return 1; }
    for (s = 0; s < n; ++s) {
        int i;
        if (fread(x, sizeof x, 1, in) != 1) { fprintf(stderr, "%s: short read\n", argv[1]); return 1; }
        for (i = 0; i < QAT_INPUT_SIZE; ++i)
            arena[QAT_INPUT_OFFSET + i] =
                quantize(x[i], QAT_INPUT_INV_SCALE, QAT_INPUT_ZERO_POINT, QAT_INPUT_QMIN, QAT_INPUT_QMAX);
        for (l = 0; l < QAT_NUM_LAYERS; ++l) {
            const qat_layer *L = &qat_layers[l];
            long j, count = L->out_size;
            switch (L->kind) {
            case QAT_KIND_CONV2D: conv2d(L, logits); break;
            case QAT_KIND_LINEAR: linear(L, logits); break;
            case QAT_KIND_ADD: add(L, logits); break;
            case QAT_KIND_MAXPOOL2D: maxpool2d(L, logits); break;
            case QAT_KIND_AVGPOOL2D: avgpool2d(L, logits); break;
            case QAT_KIND_GLOBALAVGPOOL: globalavgpool(L, logits); break;
            case QAT_KIND_FLATTEN: /* fall through: a one-input concat */
            case QAT_KIND_CONCAT: concat(L, logits); break;
            default: fprintf(stderr, "layer %s: unknown kind %d\n", L->name, L->kind); return 1;
            }
            if (L->quantized_output) {
                const int32_t *y = arena + L->output;
                if (trace && fwrite(y, sizeof *y, (size_t)count, trace) != (size_t)count) {
                    perror(argv[3]);
                    return 1;
                }
                if (replay && fread(arena + L->output, sizeof *y, (size_t)count, replay) != (size_t)count) {
                    fprintf(stderr, "%s: short read\n", argv[4]);
                    return 1;
                }
                if (l == QAT_NUM_LAYERS - 1) /* a quantized network output: dequantize it */
                    for (j = 0; j < count; ++j) logits[j] = (float)(y[j] - L->out_zero_point) * L->out_scale;
            }
        }
        if (fwrite(logits, sizeof logits, 1, out) != 1) { perror(argv[2]); return 1; }
    }
    if (fclose(out) != 0 || (trace && fclose(trace) != 0)) { perror("close"); return 1; }
    fclose(in);
    return 0;
}
