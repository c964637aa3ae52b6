/* @STEM@_runner.c: runs the INT8 network described in @STEM@_qparams.h on float32 inputs.
 * Plain C99 and libm; no TVM, no allocation (one static arena of 4-byte cells holds every live tensor).
 *
 *   @STEM@_runner INPUT OUTPUT [TRACE [REPLAY]]
 *     INPUT   N x QAT_INPUT_SIZE float32 values (NCHW, this machine's byte order); N = file size / (4*size)
 *     OUTPUT  N x QAT_OUTPUT_SIZE float32 values (the logits)
 *     TRACE   optional: per sample, the quantized output of each traced layer as int32 values, in order
 *     REPLAY  optional, laid out as TRACE: reference values (PyTorch's) that replace each traced layer's
 *             output once it is traced, so every layer is checked on the reference's own inputs
 *
 * Arithmetic follows PyTorch's INT8 reference model (torchao PT2E, converted: dequantize -> float op(s)
 * -> quantize): the input is quantized with round-half-to-even of x * (1/scale); conv2d/linear
 * accumulate (q_x - zp_x) * (q_w - zp_w) in int32, then y = acc * (input scale x weight scale) + float
 * bias [+ the residual], and requantize to the next layer's scale and zero point. Between quantize
 * nodes PyTorch computes in float32 (a hardswish or SiLU after a conv, a squeeze-excitation gate, a
 * LayerNorm, softmax, the matmuls of attention): the runner does too, on float tensors in the arena,
 * with PyTorch's formulas; a quantized input is dequantized on read. Integer paths where the graph has
 * them: a dequantize -> elementwise op(s) -> quantize island is a lookup table (PyTorch's own values),
 * a matmul of two quantized tensors accumulates in int32, a LayerNorm of a quantized tensor takes its
 * statistics from integer sums, data movement copies int8 values when the quantization is unchanged.
 * Build with
 *   cc -std=c99 -O2 -ffp-contract=off -o @STEM@_runner @STEM@_runner.c -lm
 * (-ffp-contract=off: a fused multiply-add rounds differently from PyTorch's separate multiply and add).
 * -DQAT_INTEGER_BIAS adds the int32 bias to the accumulator instead, as integer-only kernels
 * (ONNX Runtime's QLinearConv, TVM's int8 fold) do: results then match those, not PyTorch. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "@STEM@_qparams.h"

typedef union {
    int32_t q; /* a quantized value */
    float f;   /* a float value */
} qat_cell;

static qat_cell arena[QAT_ARENA_SIZE];

static int32_t quantize(float y, float inv_scale, int32_t zero_point, int32_t qmin, int32_t qmax)
{
    /* rintf rounds half to even in the default rounding mode, as torch.round does */
    float r = rintf(y * inv_scale) + (float)zero_point;
    if (r < (float)qmin) return qmin;
    if (r > (float)qmax) return qmax;
    return (int32_t)r;
}

/* Element i of a tensor as PyTorch sees it: a quantized value dequantized ((q - zp) * scale in float32). */
static float value(const qat_tensor *t, long i)
{
    if (t->type == QAT_Q) return (float)(arena[t->offset + i].q - t->zero_point) * t->scale;
    if (t->type == QAT_F) return arena[t->offset + i].f;
    return t->data[i];
}

/* One elementwise function, with PyTorch's formula (its CPU kernels, float32). */
static float apply(const qat_fn *f, float x)
{
    switch (f->fn) {
    case QAT_FN_CLAMP: return x < f->a ? f->a : (x > f->b ? f->b : x);
    case QAT_FN_HARDSWISH: return x * fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f;
    case QAT_FN_HARDSIGMOID: return fminf(fmaxf(x + 3.0f, 0.0f), 6.0f) / 6.0f;
    case QAT_FN_SIGMOID: return 1.0f / (1.0f + expf(-x));
    case QAT_FN_SILU: return x / (1.0f + expf(-x));
    case QAT_FN_GELU: return x * 0.5f * (1.0f + erff(x * 0.707106781186547524f));
    case QAT_FN_GELU_TANH: {
        const float cube = x * x * x;
        const float inner = 0.797884560802865355f * (x + 0.044715f * cube);
        return 0.5f * x * (1.0f + tanhf(inner));
    }
    case QAT_FN_TANH: return tanhf(x);
    case QAT_FN_LEAKY_RELU: return x > 0.0f ? x : x * f->a;
    case QAT_FN_ELU: return x > 0.0f ? x : f->a * expm1f(x);
    case QAT_FN_MISH: return x * tanhf(log1pf(expf(x)));
    case QAT_FN_EXP: return expf(x);
    case QAT_FN_NEG: return -x;
    case QAT_FN_ABS: return fabsf(x);
    case QAT_FN_SQRT: return sqrtf(x);
    case QAT_FN_RSQRT: return 1.0f / sqrtf(x);
    case QAT_FN_RECIPROCAL: return 1.0f / x;
    case QAT_FN_ERF: return erff(x);
    case QAT_FN_ADD_SCALAR: return x + f->a;
    case QAT_FN_SUB_SCALAR: return x - f->a;
    case QAT_FN_RSUB_SCALAR: return f->a - x;
    case QAT_FN_MUL_SCALAR: return x * f->a;
    case QAT_FN_DIV_SCALAR: return x / f->a;
    default: return x;
    }
}

/* Output value i: the layer's elementwise functions, then quantized or kept float. */
static void store(const qat_layer *L, long i, float y)
{
    int k;
    for (k = 0; k < L->n_fns; ++k) y = apply(&L->fns[k], y);
    if (L->out_type == QAT_Q)
        arena[L->output + i].q = quantize(y, L->out_inv_scale, L->out_zero_point, L->out_qmin, L->out_qmax);
    else
        arena[L->output + i].f = y;
}

/* Whether a quantized input can be copied to the output as it is (same quantization, no function). */
static int same_quantization(const qat_layer *L, const qat_tensor *t)
{
    return t->type == QAT_Q && L->out_type == QAT_Q && L->n_fns == 0 && t->scale == L->out_scale &&
           t->zero_point == L->out_zero_point && t->qmin >= L->out_qmin;
}

/* Next multi-index of `shape` in row-major order, moving n offsets by their strides; 0 at the end. */
static int advance(long *idx, const long *shape, int rank, int n, const long *const *stride, long *off)
{
    int d, k;
    for (d = rank - 1; d >= 0; --d) {
        if (++idx[d] < shape[d]) {
            for (k = 0; k < n; ++k) off[k] += stride[k][d];
            return 1;
        }
        for (k = 0; k < n; ++k) off[k] -= stride[k][d] * (shape[d] - 1);
        idx[d] = 0;
    }
    return 0;
}

static void zero_index(long *idx)
{
    int d;
    for (d = 0; d < QAT_MAX_RANK; ++d) idx[d] = 0;
}

/* PyTorch's float sum of n values (a contiguous reduction), in its vectorised order: value j into
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

static float sum_total(const qat_sum *s)
{
    float sum = 0.0f;
    long j;
    if (s->whole > 0)
        for (j = 0; j < QAT_SUM_LANES; ++j) sum += s->lanes[j];
    for (j = 0; j < s->n - s->whole; ++j) sum += s->rest[j];
    return sum;
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
    if (L->n_inputs > 1) y = y + value(&L->in[1], i);
    return y;
}

/* conv2d with float weights (a layer the quantizer kept float): float products summed in order. */
static void conv2d_float(const qat_layer *L)
{
    const qat_tensor *X = &L->in[0];
    const long in_c = X->shape[1], in_h = X->shape[2], in_w = X->shape[3];
    const long out_c = L->shape[1], out_h = L->shape[2], out_w = L->shape[3];
    const long kern_h = L->p[0], kern_w = L->p[1], groups = L->p[8];
    const long cin = in_c / groups, cout = out_c / groups;
    long oc, oh, ow, ic, kh, kw;
    for (oc = 0; oc < out_c; ++oc)
        for (oh = 0; oh < out_h; ++oh)
            for (ow = 0; ow < out_w; ++ow) {
                const long i = (oc * out_h + oh) * out_w + ow;
                float acc = 0.0f;
                for (ic = 0; ic < cin; ++ic) {
                    const long c = (oc / cout) * cin + ic;
                    for (kh = 0; kh < kern_h; ++kh) {
                        const long ih = oh * L->p[2] - L->p[4] + kh * L->p[6];
                        if (ih < 0 || ih >= in_h) continue;
                        for (kw = 0; kw < kern_w; ++kw) {
                            const long iw = ow * L->p[3] - L->p[5] + kw * L->p[7];
                            if (iw < 0 || iw >= in_w) continue;
                            acc += value(X, (c * in_h + ih) * in_w + iw) *
                                   L->float_weight[((oc * cin + ic) * kern_h + kh) * kern_w + kw];
                        }
                    }
                }
                acc = acc + L->bias[oc];
                if (L->n_inputs > 1) acc = acc + value(&L->in[1], i);
                store(L, i, acc);
            }
}

/* conv2d (conv1d as height 1), grouped and depthwise included (groups = in_c: one input channel per
 * output channel). p: kernel h, w, stride h, w, padding h, w, dilation h, w, groups. */
static void conv2d(const qat_layer *L)
{
    const qat_tensor *X = &L->in[0];
    const qat_cell *x = arena + X->offset;
    const long in_c = X->shape[1], in_h = X->shape[2], in_w = X->shape[3];
    const long out_c = L->shape[1], out_h = L->shape[2], out_w = L->shape[3];
    const long kern_h = L->p[0], kern_w = L->p[1], groups = L->p[8];
    const long cin = in_c / groups, cout = out_c / groups;
    long oc, oh, ow, ic, kh, kw;
    for (oc = 0; oc < out_c; ++oc) {
        const long g = oc / cout;
        const int32_t wz = L->weight_zero_point[oc];
        for (oh = 0; oh < out_h; ++oh) {
            for (ow = 0; ow < out_w; ++ow) {
                int32_t acc = 0;
                for (ic = 0; ic < cin; ++ic) {
                    const long c = g * cin + ic;
                    for (kh = 0; kh < kern_h; ++kh) {
                        const long ih = oh * L->p[2] - L->p[4] + kh * L->p[6];
                        if (ih < 0 || ih >= in_h) continue; /* zero padding = the zero point */
                        for (kw = 0; kw < kern_w; ++kw) {
                            const long iw = ow * L->p[3] - L->p[5] + kw * L->p[7];
                            int32_t xv, wv;
                            if (iw < 0 || iw >= in_w) continue;
                            xv = x[(c * in_h + ih) * in_w + iw].q - X->zero_point;
                            wv = (int32_t)L->weight[((oc * cin + ic) * kern_h + kh) * kern_w + kw] - wz;
                            acc += xv * wv;
                        }
                    }
                }
                {
                    const long i = (oc * out_h + oh) * out_w + ow;
                    store(L, i, conv_value(L, (int)oc, acc, i));
                }
            }
        }
    }
}

/* linear over the last dimension (p: in features), every leading index a row. */
static void linear(const qat_layer *L)
{
    const qat_tensor *X = &L->in[0];
    const long k_in = L->p[0], n_out = L->shape[L->rank - 1], rows = L->out_size / n_out;
    long r, o, i;
    if (L->float_weight) { /* a linear the quantizer kept float */
        for (r = 0; r < rows; ++r)
            for (o = 0; o < n_out; ++o) {
                float acc = 0.0f;
                for (i = 0; i < k_in; ++i) acc += value(X, r * k_in + i) * L->float_weight[o * k_in + i];
                acc = acc + L->bias[o];
                if (L->n_inputs > 1) acc = acc + value(&L->in[1], r * n_out + o);
                store(L, r * n_out + o, acc);
            }
        return;
    }
    for (r = 0; r < rows; ++r) {
        const qat_cell *x = arena + X->offset + r * k_in;
        for (o = 0; o < n_out; ++o) {
            const int32_t wz = L->weight_zero_point[o];
            int32_t acc = 0;
            for (i = 0; i < k_in; ++i) acc += (x[i].q - X->zero_point) * ((int32_t)L->weight[o * k_in + i] - wz);
            store(L, r * n_out + o, conv_value(L, (int)o, acc, r * n_out + o));
        }
    }
}

/* Elementwise add/sub/mul/div (p0: 0..3) of two tensors, broadcast by their strides. */
static void binary(const qat_layer *L)
{
    const qat_tensor *A = &L->in[0], *B = &L->in[1];
    const long *stride[2];
    long idx[QAT_MAX_RANK], off[2] = {0, 0}, i;
    stride[0] = A->stride;
    stride[1] = B->stride;
    zero_index(idx);
    for (i = 0; i < L->out_size; ++i) {
        const float a = value(A, off[0]), b = value(B, off[1]);
        float y;
        switch (L->p[0]) {
        case 0: y = a + b; break;
        case 1: y = a - b; break;
        case 2: y = a * b; break;
        default: y = a / b; break;
        }
        store(L, i, y);
        advance(idx, L->shape, L->rank, 2, stride, off);
    }
}

/* One input, same shape: the elementwise functions (or a quantize); a lookup table when quantized in
 * and out (table[q - qmin] is the stored output, computed by PyTorch). */
static void unary(const qat_layer *L)
{
    const qat_tensor *X = &L->in[0];
    long i;
    if (L->table) {
        for (i = 0; i < L->out_size; ++i) arena[L->output + i].q = L->table[arena[X->offset + i].q - X->qmin];
        return;
    }
    for (i = 0; i < L->out_size; ++i) store(L, i, value(X, i));
}

/* Data movement (permute, transpose, slice, select, expand): output element i reads the input at
 * base + sum(index x stride). Quantized values are copied as they are when the quantization stays. */
static void view(const qat_layer *L)
{
    const qat_tensor *X = &L->in[0];
    const int raw = same_quantization(L, X);
    const long *stride[1];
    long idx[QAT_MAX_RANK], off = X->base, i;
    stride[0] = X->stride;
    zero_index(idx);
    for (i = 0; i < L->out_size; ++i) {
        if (raw) arena[L->output + i].q = arena[X->offset + off].q;
        else store(L, i, value(X, off));
        advance(idx, L->shape, L->rank, 1, stride, &off);
    }
}

/* cat/stack: input k's element at its own index lands at base + sum(index x stride) of the output. */
static void concat(const qat_layer *L)
{
    int k;
    for (k = 0; k < L->n_inputs; ++k) {
        const qat_tensor *T = &L->in[k];
        const int raw = same_quantization(L, T);
        const long *stride[1];
        long idx[QAT_MAX_RANK], off = T->base, n = 1, j;
        int d;
        stride[0] = T->stride;
        zero_index(idx);
        for (d = 0; d < T->rank; ++d) n *= T->shape[d];
        for (j = 0; j < n; ++j) {
            if (raw) arena[L->output + off].q = arena[T->offset + j].q;
            else store(L, off, value(T, j));
            advance(idx, T->shape, T->rank, 1, stride, &off);
        }
    }
}

/* max_pool2d over N x C x H x W (p as conv2d's, padding with -inf): on the stored values when
 * quantized (the max of dequantized values is the dequantized max: scales are positive). */
static void maxpool2d(const qat_layer *L)
{
    const qat_tensor *X = &L->in[0];
    const long c_n = L->shape[1], out_h = L->shape[2], out_w = L->shape[3], in_h = X->shape[2], in_w = X->shape[3];
    const int raw = same_quantization(L, X);
    long c, oh, ow, kh, kw;
    for (c = 0; c < c_n; ++c)
        for (oh = 0; oh < out_h; ++oh)
            for (ow = 0; ow < out_w; ++ow) {
                int32_t best = INT32_MIN;
                float fbest = -INFINITY;
                const long i = (c * out_h + oh) * out_w + ow;
                for (kh = 0; kh < L->p[0]; ++kh) {
                    const long ih = oh * L->p[2] - L->p[4] + kh * L->p[6];
                    if (ih < 0 || ih >= in_h) continue;
                    for (kw = 0; kw < L->p[1]; ++kw) {
                        const long iw = ow * L->p[3] - L->p[5] + kw * L->p[7];
                        const long at = (c * in_h + ih) * in_w + iw;
                        if (iw < 0 || iw >= in_w) continue;
                        if (X->type == QAT_Q) {
                            if (arena[X->offset + at].q > best) best = arena[X->offset + at].q;
                        } else {
                            const float v = value(X, at);
                            if (v > fbest || v != v) fbest = v;
                        }
                    }
                }
                if (X->type != QAT_Q) store(L, i, fbest);
                else if (raw) arena[L->output + i].q = best;
                else store(L, i, (float)(best - X->zero_point) * X->scale);
            }
}

/* avg_pool2d as PyTorch's CPU kernel: the window's values summed in order, divided by the window size
 * (counting the padding when count_include_pad; p[9]: divisor_override when not 0). */
static void avgpool2d(const qat_layer *L)
{
    const qat_tensor *X = &L->in[0];
    const long c_n = L->shape[1], out_h = L->shape[2], out_w = L->shape[3], in_h = X->shape[2], in_w = X->shape[3];
    long c, oh, ow, ih, iw;
    for (c = 0; c < c_n; ++c)
        for (oh = 0; oh < out_h; ++oh)
            for (ow = 0; ow < out_w; ++ow) {
                long h0 = oh * L->p[2] - L->p[4], w0 = ow * L->p[3] - L->p[5];
                long h1 = h0 + L->p[0], w1 = w0 + L->p[1], divisor;
                float sum = 0.0f;
                if (h1 > in_h + L->p[4]) h1 = in_h + L->p[4];
                if (w1 > in_w + L->p[5]) w1 = in_w + L->p[5];
                divisor = (h1 - h0) * (w1 - w0);
                if (h0 < 0) h0 = 0;
                if (w0 < 0) w0 = 0;
                if (h1 > in_h) h1 = in_h;
                if (w1 > in_w) w1 = in_w;
                if (!L->p[8]) divisor = (h1 - h0) * (w1 - w0);
                if (L->p[9]) divisor = L->p[9];
                for (ih = h0; ih < h1; ++ih)
                    for (iw = w0; iw < w1; ++iw) sum += value(X, (c * in_h + ih) * in_w + iw);
                store(L, (c * out_h + oh) * out_w + ow, sum / (float)divisor);
            }
}

/* adaptive_avg_pool2d to an output size other than 1x1: PyTorch's windows [floor(i*in/out),
 * ceil((i+1)*in/out)), summed in order. */
static void adaptiveavgpool2d(const qat_layer *L)
{
    const qat_tensor *X = &L->in[0];
    const long c_n = L->shape[1], out_h = L->shape[2], out_w = L->shape[3], in_h = X->shape[2], in_w = X->shape[3];
    long c, oh, ow, ih, iw;
    for (c = 0; c < c_n; ++c)
        for (oh = 0; oh < out_h; ++oh)
            for (ow = 0; ow < out_w; ++ow) {
                const long h0 = oh * in_h / out_h, h1 = ((oh + 1) * in_h + out_h - 1) / out_h;
                const long w0 = ow * in_w / out_w, w1 = ((ow + 1) * in_w + out_w - 1) / out_w;
                float sum = 0.0f;
                for (ih = h0; ih < h1; ++ih)
                    for (iw = w0; iw < w1; ++iw) sum += value(X, (c * in_h + ih) * in_w + iw);
                store(L, (c * out_h + oh) * out_w + ow, sum / (float)((h1 - h0) * (w1 - w0)));
            }
}

/* mean/sum/amax (p0: 0, 1, 2) over the last rank - p1 dimensions of the input's walk (the header
 * orders the kept dimensions first); p2: the reduced block is PyTorch's contiguous inner reduction. */
static void reduce(const qat_layer *L)
{
    const qat_tensor *X = &L->in[0];
    const int kept = (int)L->p[1], nred = X->rank - kept;
    const long *kstride[1], *rstride[1];
    long kidx[QAT_MAX_RANK], ridx[QAT_MAX_RANK], koff = 0, n = 1, o, j;
    int d;
    kstride[0] = X->stride;
    rstride[0] = X->stride + kept;
    for (d = kept; d < X->rank; ++d) n *= X->shape[d];
    zero_index(kidx);
    for (o = 0; o < L->out_size; ++o) {
        long roff = 0;
        float y;
        zero_index(ridx);
        if (L->p[0] == 2) {
            y = -INFINITY;
            for (j = 0; j < n; ++j) {
                const float v = value(X, koff + roff);
                if (v > y || v != v) y = v;
                advance(ridx, X->shape + kept, nred, 1, rstride, &roff);
            }
        } else {
            qat_sum s;
            float seq = 0.0f;
            sum_start(&s, n);
            for (j = 0; j < n; ++j) {
                const float v = value(X, koff + roff);
                if (L->p[2]) sum_add(&s, j, v);
                else seq += v;
                advance(ridx, X->shape + kept, nred, 1, rstride, &roff);
            }
            y = L->p[2] ? sum_total(&s) : seq;
            if (L->p[0] == 0) y = y / (float)n;
        }
        store(L, o, y);
        advance(kidx, X->shape, kept, 1, kstride, &koff);
    }
}

/* layer_norm over the last p0 values of each row. A quantized input's statistics come from exact
 * integer sums of (q - zp); a float input's from double sums. PyTorch's form of the normalisation:
 * (x * rstd + (-rstd * mean)) * weight + bias. */
static void layernorm(const qat_layer *L)
{
    const qat_tensor *X = &L->in[0];
    const long size = L->p[0], rows = L->out_size / size;
    long r, j;
    for (r = 0; r < rows; ++r) {
        const long at = r * size;
        double mean, var;
        float rstd, shift;
        if (X->type == QAT_Q) {
            int64_t s1 = 0, s2 = 0;
            for (j = 0; j < size; ++j) {
                const int64_t v = arena[X->offset + at + j].q - X->zero_point;
                s1 += v;
                s2 += v * v;
            }
            mean = (double)X->scale * (double)s1 / (double)size;
            var = (double)X->scale * (double)X->scale *
                  ((double)s2 / (double)size - ((double)s1 / (double)size) * ((double)s1 / (double)size));
        } else {
            double sum = 0.0, sq = 0.0;
            for (j = 0; j < size; ++j) sum += value(X, at + j);
            mean = sum / (double)size;
            for (j = 0; j < size; ++j) {
                const double dv = value(X, at + j) - mean;
                sq += dv * dv;
            }
            var = sq / (double)size;
        }
        if (var < 0.0) var = 0.0;
        rstd = 1.0f / sqrtf((float)var + L->f[0]);
        shift = -rstd * (float)mean;
        for (j = 0; j < size; ++j) {
            float y = value(X, at + j) * rstd + shift;
            if (L->gamma) y = y * L->gamma[j];
            if (L->beta) y = y + L->beta[j];
            store(L, at + j, y);
        }
    }
}

/* Eval-mode batch_norm (not folded into a conv): y = x * alpha[c] + beta[c] (p0 channels, p1 values
 * per channel and sample), alpha and beta as PyTorch's kernel computes them. */
static void batchnorm(const qat_layer *L)
{
    const qat_tensor *X = &L->in[0];
    const long channels = L->p[0], inner = L->p[1];
    long i;
    for (i = 0; i < L->out_size; ++i) {
        const long c = (i / inner) % channels;
        store(L, i, value(X, i) * L->gamma[c] + L->beta[c]);
    }
}

/* softmax along a dimension of p0 values, p1 apart: exp(x - max) / sum, as PyTorch's kernel (the sum
 * in vector lanes, then a multiply by its reciprocal). */
static void softmax(const qat_layer *L)
{
    const qat_tensor *X = &L->in[0];
    const long size = L->p[0], inner = L->p[1], outer = L->out_size / (size * inner);
    long o, i, j;
    for (o = 0; o < outer; ++o)
        for (i = 0; i < inner; ++i) {
            const long at = o * size * inner + i;
            float mx = -INFINITY, total;
            qat_sum s;
            for (j = 0; j < size; ++j) {
                const float v = value(X, at + j * inner);
                if (v > mx) mx = v;
            }
            sum_start(&s, size);
            for (j = 0; j < size; ++j) sum_add(&s, j, expf(value(X, at + j * inner) - mx));
            total = 1.0f / sum_total(&s);
            for (j = 0; j < size; ++j) store(L, at + j * inner, expf(value(X, at + j * inner) - mx) * total);
        }
}

/* matmul of two activations [..., M, K] x [..., K, N], batch dimensions broadcast (p0: K). Two
 * quantized inputs accumulate (qa - za)(qb - zb) in int32; otherwise float products are summed. */
static void matmul(const qat_layer *L)
{
    const qat_tensor *A = &L->in[0], *B = &L->in[1];
    const long k_n = L->p[0];
    const int integer = A->type == QAT_Q && B->type == QAT_Q;
    const float scale = A->scale * B->scale;
    const long *stride[2];
    long idx[QAT_MAX_RANK], off[2] = {0, 0}, i, k;
    stride[0] = A->stride;
    stride[1] = B->stride;
    zero_index(idx);
    for (i = 0; i < L->out_size; ++i) {
        if (integer) {
            int32_t acc = 0;
            for (k = 0; k < k_n; ++k)
                acc += (arena[A->offset + off[0] + k * A->kstride].q - A->zero_point) *
                       (arena[B->offset + off[1] + k * B->kstride].q - B->zero_point);
            store(L, i, (float)acc * scale);
        } else {
            float acc = 0.0f;
            for (k = 0; k < k_n; ++k) acc += value(A, off[0] + k * A->kstride) * value(B, off[1] + k * B->kstride);
            store(L, i, acc);
        }
        advance(idx, L->shape, L->rank, 2, stride, off);
    }
}

/* Nearest or bilinear (p0: 0, 1; p1: align_corners) upsampling of N x C x H x W, as PyTorch's CPU
 * kernel: the source coordinate scale in f[0], f[1] (height, width); bilinear sums the row pair's
 * width interpolations weighted by height. */
static long source_index(const qat_layer *L, int dim, long dst, long in_size, float *lambda)
{
    const float scale = L->f[dim];
    float real;
    long i0;
    if (L->p[0] == 0) { /* nearest: floor(dst x scale) */
        i0 = (long)floorf((float)dst * scale);
        return i0 < in_size - 1 ? i0 : in_size - 1;
    }
    real = L->p[1] ? scale * (float)dst : scale * ((float)dst + 0.5f) - 0.5f;
    if (real < 0.0f) real = 0.0f;
    i0 = (long)real;
    *lambda = real - (float)i0;
    if (*lambda < 0.0f) *lambda = 0.0f;
    if (*lambda > 1.0f) *lambda = 1.0f;
    return i0;
}

static void upsample(const qat_layer *L)
{
    const qat_tensor *X = &L->in[0];
    const long c_n = L->shape[1], out_h = L->shape[2], out_w = L->shape[3], in_h = X->shape[2], in_w = X->shape[3];
    long c, oh, ow;
    for (c = 0; c < c_n; ++c)
        for (oh = 0; oh < out_h; ++oh) {
            float lh = 0.0f, lw = 0.0f;
            const long h0 = source_index(L, 0, oh, in_h, &lh), h1 = h0 + (h0 < in_h - 1 ? 1 : 0);
            const long row0 = (c * in_h + h0) * in_w, row1 = (c * in_h + h1) * in_w;
            for (ow = 0; ow < out_w; ++ow) {
                const long w0 = source_index(L, 1, ow, in_w, &lw), w1 = w0 + (w0 < in_w - 1 ? 1 : 0);
                const long i = (c * out_h + oh) * out_w + ow;
                if (L->p[0] == 0) {
                    store(L, i, value(X, row0 + w0));
                } else {
                    const float top = value(X, row0 + w0) * (1.0f - lw) + value(X, row0 + w1) * lw;
                    const float bottom = value(X, row1 + w0) * (1.0f - lw) + value(X, row1 + w1) * lw;
                    store(L, i, top * (1.0f - lh) + bottom * lh);
                }
            }
        }
}

/* scaled_dot_product_attention without a mask: softmax(q k^T x scale) v per batch and head (p: L, S,
 * E, Ev, batch x heads; eps holds the scale). The scores of one query row live on the stack. */
#define QAT_ATTENTION_MAX_KEYS 4096
static void attention(const qat_layer *L)
{
    const qat_tensor *Q = &L->in[0], *K = &L->in[1], *V = &L->in[2];
    const long lq = L->p[0], sk = L->p[1], e = L->p[2], ev = L->p[3], heads = L->p[4];
    float score[QAT_ATTENTION_MAX_KEYS];
    long h, l, s, j;
    for (h = 0; h < heads; ++h)
        for (l = 0; l < lq; ++l) {
            float mx = -INFINITY, total = 0.0f;
            for (s = 0; s < sk && s < QAT_ATTENTION_MAX_KEYS; ++s) {
                float dot = 0.0f;
                for (j = 0; j < e; ++j) dot += value(Q, (h * lq + l) * e + j) * value(K, (h * sk + s) * e + j);
                score[s] = dot * L->f[0];
                if (score[s] > mx) mx = score[s];
            }
            for (s = 0; s < sk; ++s) {
                score[s] = expf(score[s] - mx);
                total += score[s];
            }
            for (j = 0; j < ev; ++j) {
                float acc = 0.0f;
                for (s = 0; s < sk; ++s) acc += score[s] * value(V, (h * sk + s) * ev + j);
                store(L, (h * lq + l) * ev + j, acc / total);
            }
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
    for (l = 0; l < QAT_NUM_LAYERS; ++l)
        if (qat_layers[l].kind == QAT_KIND_ATTENTION && qat_layers[l].p[1] > QAT_ATTENTION_MAX_KEYS) {
            fprintf(stderr, "layer %s: more than %d keys; rebuild with a larger QAT_ATTENTION_MAX_KEYS\n",
                    qat_layers[l].name, QAT_ATTENTION_MAX_KEYS);
            return 1;
        }
    in = fopen(argv[1], "rb");
    if (!in) { perror(argv[1]); return 1; }
    if (fseek(in, 0, SEEK_END) != 0 || (bytes = ftell(in)) < 0 || fseek(in, 0, SEEK_SET) != 0) {
        perror(argv[1]);
        return 1;
    }
    if (bytes % (long)sizeof x != 0) {
        fprintf(stderr, "%s: %ld bytes is not a whole number of float32 inputs of %d values\n", argv[1], bytes,
                QAT_INPUT_SIZE);
        return 1;
    }
    n = bytes / (long)sizeof x;
    out = fopen(argv[2], "wb");
    if (!out) { perror(argv[2]); return 1; }
    if (argc >= 4 && !(trace = fopen(argv[3], "wb"))) { perror(argv[3]); return 1; }
    if (argc == 5 && !(replay = fopen(argv[4], "rb"))) { perror(argv[4]); return 1; }
    for (s = 0; s < n; ++s) {
        long i;
        if (fread(x, sizeof x, 1, in) != 1) { fprintf(stderr, "%s: short read\n", argv[1]); return 1; }
        for (i = 0; i < QAT_INPUT_SIZE; ++i) {
            if (QAT_INPUT_TYPE == QAT_F) arena[QAT_INPUT_OFFSET + i].f = x[i];
            else arena[QAT_INPUT_OFFSET + i].q =
                quantize(x[i], QAT_INPUT_INV_SCALE, QAT_INPUT_ZERO_POINT, QAT_INPUT_QMIN, QAT_INPUT_QMAX);
        }
        for (l = 0; l < QAT_NUM_LAYERS; ++l) {
            const qat_layer *L = &qat_layers[l];
            switch (L->kind) {
            case QAT_KIND_CONV2D:
                if (L->float_weight) conv2d_float(L);
                else conv2d(L);
                break;
            case QAT_KIND_LINEAR: linear(L); break;
            case QAT_KIND_BINARY: binary(L); break;
            case QAT_KIND_UNARY: unary(L); break;
            case QAT_KIND_VIEW: view(L); break;
            case QAT_KIND_CONCAT: concat(L); break;
            case QAT_KIND_MAXPOOL2D: maxpool2d(L); break;
            case QAT_KIND_AVGPOOL2D: avgpool2d(L); break;
            case QAT_KIND_ADAPTIVEAVGPOOL2D: adaptiveavgpool2d(L); break;
            case QAT_KIND_REDUCE: reduce(L); break;
            case QAT_KIND_LAYERNORM: layernorm(L); break;
            case QAT_KIND_BATCHNORM: batchnorm(L); break;
            case QAT_KIND_SOFTMAX: softmax(L); break;
            case QAT_KIND_MATMUL: matmul(L); break;
            case QAT_KIND_ATTENTION: attention(L); break;
            case QAT_KIND_UPSAMPLE: upsample(L); break;
            default: fprintf(stderr, "layer %s: unknown kind %d\n", L->name, L->kind); return 1;
            }
            if (L->traced) {
                const size_t count = (size_t)L->out_size;
                if (trace && fwrite(arena + L->output, sizeof(qat_cell), count, trace) != count) {
                    perror(argv[3]);
                    return 1;
                }
                if (replay && fread(arena + L->output, sizeof(qat_cell), count, replay) != count) {
                    fprintf(stderr, "%s: short read\n", argv[4]);
                    return 1;
                }
            }
        }
        for (i = 0; i < QAT_OUTPUT_SIZE; ++i)
            logits[i] = QAT_OUTPUT_TYPE == QAT_Q
                            ? (float)(arena[QAT_OUTPUT_OFFSET + i].q - QAT_OUTPUT_ZERO_POINT) * QAT_OUTPUT_SCALE
                            : arena[QAT_OUTPUT_OFFSET + i].f;
        if (fwrite(logits, sizeof logits, 1, out) != 1) { perror(argv[2]); return 1; }
    }
    if (fclose(out) != 0 || (trace && fclose(trace) != 0)) { perror("close"); return 1; }
    fclose(in);
    return 0;
}
