/* @STEM@_runner.c: runs the INT8 network described in @STEM@_qparams.h on float32 inputs.
 * Plain C99 and libm; no TVM, no allocation (two static activation buffers).
 *
 *   @STEM@_runner INPUT OUTPUT [TRACE]
 *     INPUT   N x C x H x W float32 values (NCHW, this machine's byte order); N = file size / (4*C*H*W)
 *     OUTPUT  N x QAT_OUTPUT_SIZE float32 values (the logits)
 *     TRACE   optional: per sample, each layer's quantized output as int32 values, in layer order
 *
 * Arithmetic follows PyTorch's x86 INT8 model (torchao PT2E, converted): the input is quantized
 * with round-half-to-even of x * (1/scale); conv2d/linear accumulate (q_x - zp_x) * (q_w - zp_w) in
 * int32, then y = acc * (input scale x weight scale) + float bias, relu, and requantize to the next
 * layer's scale and zero point; max_pool2d and flatten requantize their input. Build with
 *   cc -std=c99 -O2 -ffp-contract=off -o @STEM@_runner @STEM@_runner.c -lm
 * (-ffp-contract=off: a fused multiply-add rounds differently from PyTorch's separate multiply and add).
 * -DQAT_INTEGER_BIAS adds the int32 bias to the accumulator instead, as integer-only kernels
 * (ONNX Runtime's QLinearConv, TVM's int8 fold) do: results then match those, not PyTorch. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "@STEM@_qparams.h"

static int32_t activations[2][QAT_MAX_ACTIVATION];

static int32_t quantize(float y, float inv_scale, int32_t zero_point, int32_t qmin, int32_t qmax)
{
    /* rintf rounds half to even in the default rounding mode, as torch.round does */
    float r = rintf(y * inv_scale) + (float)zero_point;
    if (r < (float)qmin) return qmin;
    if (r > (float)qmax) return qmax;
    return (int32_t)r;
}

/* One output value of a conv2d/linear layer from its int32 accumulator. */
static void emit(const qat_layer *L, int oc, int32_t acc, long i, int32_t *q_out, float *f_out)
{
    float y;
#ifdef QAT_INTEGER_BIAS
    y = (float)(acc + L->bias_int32[oc]) * L->acc_scale[oc];
#else
    y = (float)acc * L->acc_scale[oc];
    y = y + L->bias[oc];
#endif
    if (L->relu && y < 0.0f) y = 0.0f;
    if (L->quantized_output)
        q_out[i] = quantize(y, L->out_inv_scale, L->out_zero_point, L->out_qmin, L->out_qmax);
    else
        f_out[i] = y;
}

static void conv2d(const qat_layer *L, const int32_t *x, int32_t *q_out, float *f_out)
{
    const int cin = L->in_c / L->groups, cout = L->out_c / L->groups;
    int oc, oh, ow, ic, kh, kw;
    for (oc = 0; oc < L->out_c; ++oc) {
        const int g = oc / cout;
        const int32_t wz = L->weight_zero_point[oc];
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
                            xv = x[((long)c * L->in_h + ih) * L->in_w + iw] - L->in_zero_point;
                            wv = (int32_t)L->weight[(((long)oc * cin + ic) * L->kernel_h + kh) * L->kernel_w + kw] - wz;
                            acc += xv * wv;
                        }
                    }
                }
                emit(L, oc, acc, ((long)oc * L->out_h + oh) * L->out_w + ow, q_out, f_out);
            }
        }
    }
}

static void linear(const qat_layer *L, const int32_t *x, int32_t *q_out, float *f_out)
{
    int o, i;
    for (o = 0; o < L->out_c; ++o) {
        const int32_t wz = L->weight_zero_point[o];
        int32_t acc = 0;
        for (i = 0; i < L->in_c; ++i)
            acc += (x[i] - L->in_zero_point) * ((int32_t)L->weight[(long)o * L->in_c + i] - wz);
        emit(L, o, acc, o, q_out, f_out);
    }
}

static int32_t requantize(const qat_layer *L, int32_t q)
{
    return quantize((float)(q - L->in_zero_point) * L->in_scale, L->out_inv_scale, L->out_zero_point,
                    L->out_qmin, L->out_qmax);
}

static void maxpool2d(const qat_layer *L, const int32_t *x, int32_t *q_out)
{
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
                q_out[((long)c * L->out_h + oh) * L->out_w + ow] = requantize(L, best);
            }
}

static long size_of(int c, int h, int w) { return (long)c * h * w; }

int main(int argc, char **argv)
{
    FILE *in, *out, *trace = NULL;
    float x[QAT_INPUT_SIZE], logits[QAT_OUTPUT_SIZE];
    long n, bytes, s;
    int l;
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: %s INPUT.f32 OUTPUT.f32 [TRACE.i32]\n", argv[0]);
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
    if (argc == 4 && !(trace = fopen(argv[3], "wb"))) { perror(argv[3]); return 1; }
    for (s = 0; s < n; ++s) {
        int cur = 0, i;
        if (fread(x, sizeof x, 1, in) != 1) { fprintf(stderr, "%s: short read\n", argv[1]); return 1; }
        for (i = 0; i < QAT_INPUT_SIZE; ++i)
            activations[0][i] = quantize(x[i], QAT_INPUT_INV_SCALE, QAT_INPUT_ZERO_POINT, QAT_INPUT_QMIN, QAT_INPUT_QMAX);
        for (l = 0; l < QAT_NUM_LAYERS; ++l) {
            const qat_layer *L = &qat_layers[l];
            int32_t *src = activations[cur], *dst = activations[1 - cur];
            long j, count = size_of(L->out_c, L->out_h, L->out_w);
            switch (L->kind) {
            case QAT_KIND_CONV2D: conv2d(L, src, dst, logits); break;
            case QAT_KIND_LINEAR: linear(L, src, dst, logits); break;
            case QAT_KIND_MAXPOOL2D: maxpool2d(L, src, dst); break;
            case QAT_KIND_FLATTEN: for (j = 0; j < count; ++j) dst[j] = requantize(L, src[j]); break;
            default: fprintf(stderr, "layer %s: unknown kind %d\n", L->name, L->kind); return 1;
            }
            if (L->quantized_output) {
                if (trace && fwrite(dst, sizeof *dst, (size_t)count, trace) != (size_t)count) {
                    perror(argv[3]);
                    return 1;
                }
                if (l == QAT_NUM_LAYERS - 1) /* a quantized network output: dequantize it */
                    for (j = 0; j < count; ++j) logits[j] = (float)(dst[j] - L->out_zero_point) * L->out_scale;
            }
            cur = 1 - cur;
        }
        if (fwrite(logits, sizeof logits, 1, out) != 1) { perror(argv[2]); return 1; }
    }
    if (fclose(out) != 0 || (trace && fclose(trace) != 0)) { perror("close"); return 1; }
    fclose(in);
    return 0;
}
