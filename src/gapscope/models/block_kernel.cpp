// Linear layers whose weights are a GGUF's quantization codes, evaluated exactly.
//
// Each weight is w = fl(fl(scale * code) + offset), one scale and offset per block of `block`
// (16 or 32) consecutive inputs of an output row: the same two roundings, in the same order,
// as the dequantization that wrote the fp32 checkpoint (gguf-py, numpy), so every weight this
// file computes is bitwise the checkpoint's (see `weights` on keeping the compiler from
// fusing them into one fma, which rounds once).
//
// gs_block_matmul is the decode-step product out = x . w^T for a few rows of x: it reads the
// codes (1 byte a weight, or half, against fp32's 4) from memory once for all rows, computing
// them in groups (4 rows with AVX-512, else 2), and sums in fp32. A row's sums are taken in the
// same order whatever the other rows of its batch are, so a row decodes the same batched and
// alone. gs_dequantize writes fp32 weights, for products with many rows (prefill), which then
// go to the BLAS exactly as the fp32 checkpoint's would. gs_rotary and gs_rms_scale are a
// decoder layer's small elementwise steps (gapscope.models.layer_ops), rounded as torch's
// separate ops round them. gs_decode_attention is a decode step's attention for every row of
// a batch (gapscope.models.decode_attention): not SDPA's bits, its own fixed order.
//
// Threads: OpenMP. torch's CPU build ships libgomp.so.1 and loads it first, so this library
// shares torch's OpenMP runtime and thread count (torch.set_num_threads) instead of starting
// a second pool that would spin against it.

#include <cstdint>
#include <cstring>
#include <vector>
#if defined(__AVX2__) || defined(__AVX512F__)
#include <immintrin.h>
#endif

// One vector of LANES floats: 16 with AVX-512, 8 otherwise (AVX2, or plain code).
#if defined(__AVX512F__)
constexpr int LANES = 16;
#else
constexpr int LANES = 8;
#endif
typedef float floats __attribute__((vector_size(4 * LANES)));
typedef int32_t ints __attribute__((vector_size(4 * LANES)));
typedef int8_t codes_t __attribute__((vector_size(LANES)));

static inline ints widen(const int8_t* codes) {
    // gcc 12 leaves __builtin_convertvector from int8 to int32 lanes as scalar code
#if defined(__AVX512F__)
    return (ints)_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i*)codes));
#elif defined(__AVX2__)
    return (ints)_mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i*)codes));
#else
    codes_t raw;
    std::memcpy(&raw, codes, sizeof raw);
    return __builtin_convertvector(raw, ints);
#endif
}

// 4-bit codes (blocks of 32: Q4_1, Q4_K) are kept two a byte, grouped for this kernel: a
// row's inputs go in groups of 128 (then one group of 64 where 64 remain), and lane l of a
// group (l = 0..15), a little-endian 32-bit word (16-bit in a group of 64), holds the codes of
// the group's inputs l, l + 16, l + 32, ... in its successive nibbles. One 64-byte load brings
// 128 codes, and a shift of the words by 4 brings the next 16 into the low nibbles, which is
// all that a 16-entry permute reads: no widening of codes to lanes, which took a shuffle per
// 16 codes on the port the permutes and the fmas also need. (block_linear.pack_nibbles writes
// this layout.)
constexpr int64_t GROUP_INPUTS = 128;

static inline int64_t grouped_inputs(int64_t k_inputs) {
    return k_inputs / GROUP_INPUTS * GROUP_INPUTS;
}

static inline ints half_words(const uint8_t* halves) {
    // LANES little-endian 16-bit words, zero-extended to 32 bits
#if defined(__AVX512F__)
    return (ints)_mm512_cvtepu16_epi32(_mm256_loadu_si256((const __m256i*)halves));
#elif defined(__AVX2__)
    return (ints)_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i*)halves));
#else
    ints words;
    for (int l = 0; l < LANES; ++l) words[l] = halves[2 * l] | (halves[2 * l + 1] << 8);
    return words;
#endif
}

static inline ints nibbles_at(const uint8_t* row, int64_t k_inputs, int64_t i) {
    // the codes of inputs i .. i + LANES - 1 (i a multiple of LANES) of a grouped row
    const int64_t grouped = grouped_inputs(k_inputs);
    ints words;
    int64_t place;  // the nibble the inputs are in
    if (i < grouped) {
        std::memcpy(&words, row + (i / GROUP_INPUTS) * 64 + (i % 16) * 4, sizeof words);
        place = (i % GROUP_INPUTS) / 16;
    } else {
        words = half_words(row + grouped / 2 + (i % 16) * 2);
        place = (i - grouped) / 16;
    }
    return (words >> (int)(4 * place)) & 0x0F;
}

// Where the codes of inputs i .. i + LANES - 1 of a row are: one int8 code a byte (BYTES), or
// 4-bit codes grouped as above (NIBBLES). Both give the same weights, so a layer computes the
// same in either.
template <bool NIBBLES>
static inline ints codes_at(const uint8_t* row, int64_t k_inputs, int64_t i) {
    if (NIBBLES) return nibbles_at(row, k_inputs, i);
    return widen((const int8_t*)row + i);
}

template <bool NIBBLES>
static inline int64_t row_bytes(int64_t k_inputs) {
    return NIBBLES ? k_inputs / 2 : k_inputs;
}

static inline floats scaled(ints codes, float scale) {
    return __builtin_convertvector(codes, floats) * scale;
}

static inline floats weights(ints codes, float scale, float offset) {
    // never fused with the product (-ffp-contract=off). No offset is passed as -0.0, which
    // leaves every float as it is (-0.0 + 0.0 would be +0.0: gguf-py adds nothing there)
    return scaled(codes, scale) + offset;
}

#if defined(__AVX512F__)
static inline floats table16(float scale, float offset) {
    // the 16 weights codes 0..15 stand for, rounded as `weights` rounds them
    const floats codes = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    const floats w = codes * scale;
    return w + offset;
}
#endif

static inline floats multiply_add(floats x, floats w, floats acc) {
    // acc + x * w; an fma where the CPU has one (the weights above must not be fused, these
    // sums may: the compiler is told not to fuse, so the fma is asked for by name)
#if defined(__AVX512F__)
    return (floats)_mm512_fmadd_ps((__m512)x, (__m512)w, (__m512)acc);
#elif defined(__AVX2__) && defined(__FMA__)
    return (floats)_mm256_fmadd_ps((__m256)x, (__m256)w, (__m256)acc);
#else
    return acc + x * w;
#endif
}

static inline floats load(const float* x) {
    floats v;
    std::memcpy(&v, x, sizeof v);
    return v;
}

static inline float sum(floats v) {
    // a fixed pairwise order, the same for every row and call: lanes[i] += lanes[i + width]
    // for width LANES / 2, ..., 2, 1. Spelled out in shuffles where the CPU has them (the
    // same additions of the same pairs, so the same float): the loop compiled to scalar code
    // through the stack, about a fifth of a SmolLM2 decode step's products, once per output.
#if defined(__AVX512F__) || defined(__AVX2__)
#if defined(__AVX512F__)
    const __m512 all = (__m512)v;
    const __m256 high8 = _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(all), 1));
    const __m256 eight = _mm256_add_ps(_mm512_castps512_ps256(all), high8);
#else
    const __m256 eight = (__m256)v;
#endif
    const __m128 four = _mm_add_ps(_mm256_castps256_ps128(eight), _mm256_extractf128_ps(eight, 1));
    const __m128 two = _mm_add_ps(four, _mm_movehl_ps(four, four));
    return _mm_cvtss_f32(_mm_add_ss(two, _mm_movehdup_ps(two)));
#else
    float lanes[LANES];
    std::memcpy(lanes, &v, sizeof lanes);
    for (int width = LANES / 2; width >= 1; width /= 2)
        for (int i = 0; i < width; ++i) lanes[i] += lanes[i + width];
    return lanes[0];
#endif
}

// exp(x) for the lanes of x, all <= 0 (scores less their maximum): the range reduction x =
// n ln2 + r, |r| <= ln2 / 2, and a degree-6 polynomial for exp(r) (Cephes' expf
// coefficients), scaled by 2^n through the exponent bits; within 2 ulp of the exact value,
// which is as close as the approximation torch's own flash attention uses for its exp. Below
// -87.3 (past the smallest normal float) it gives 0.
static inline floats exp_nonpositive(floats x) {
    const floats lowest = floats{} - 87.3365447504f;
    x = x < lowest ? lowest : x;
    const float shifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
    const floats shifted = x * 1.44269504089f + shifter;
    const floats n = shifted - shifter;
    floats r = x - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    floats p = r * 1.9875691500e-4f + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    const ints power = (((ints)shifted - 0x4B400000) + 127) << 23;
    floats scale;
    std::memcpy(&scale, &power, sizeof scale);
    return p * scale;
}

constexpr int CHAINS = 4;
// Each row sums its products in CHAINS independent accumulators, the LANES inputs from k going
// to chain (k / LANES) % CHAINS, in order of k, and the chains are added in a fixed order at
// the end: one chain would wait on the latency of every addition. The order is the same for
// every number of rows and either code layout, so a row's result never depends on its batch.

template <int ROWS>
static inline void add_products(floats (&acc)[ROWS][CHAINS], const float* x, int64_t k_inputs,
                                int64_t k, int chain, floats w) {
    // acc[:, chain] += x[:, k .. k + LANES) * w, for each row; chain is (k / LANES) % CHAINS,
    // passed as a constant of the unrolled loops so that acc stays in registers
    for (int r = 0; r < ROWS; ++r)
        acc[r][chain] = multiply_add(load(x + r * k_inputs + k), w, acc[r][chain]);
}

#if defined(__AVX512F__)
template <int ROWS, int BLOCKS>
static inline void add_nibble_blocks(floats (&acc)[ROWS][CHAINS], const float* x,
                                     int64_t k_inputs, int64_t k, __m512i words,
                                     const float* scale, const float* offset) {
    // the products of a group of grouped 4-bit codes (BLOCKS blocks of 32 from input k, a
    // multiple of 64): each block's 16 possible weights once (table16), then each weight
    // picked by its code
#pragma GCC unroll 4
    for (int block = 0; block < BLOCKS; ++block) {
        const int64_t b = k / 32 + block;
        const __m512 table = (__m512)table16(scale[b], offset ? offset[b] : -0.0f);
#pragma GCC unroll 2
        for (int half = 0; half < 2; ++half) {
            add_products(acc, x, k_inputs, k + 32 * block + 16 * half, (2 * block + half) % CHAINS,
                         (floats)_mm512_permutexvar_ps(words, table));
            words = _mm512_srli_epi32(words, 4);
        }
    }
}
#endif

// A row's codes, scales and offsets are three streams the hardware prefetcher follows too
// late: a decode step reads every weight once, from memory, and waited on it. Asking for the
// row PREFETCH_ROWS ahead while this one is computed took a SmolLM2 decode step's products
// from 17.3 to 12.0 ms on one core of a Xeon with AVX-512 and AMX (2 to 6 rows ahead did about
// as well); the grouped 4-bit layout had taken them from 19.8 to 17.3.
constexpr int64_t PREFETCH_ROWS = 4;

static inline void prefetch_row(const uint8_t* codes, int64_t code_bytes, const float* scale,
                                const float* offset, int64_t blocks) {
    for (int64_t byte = 0; byte < code_bytes; byte += 64)
        __builtin_prefetch(codes + byte, 0, 3);
    for (int64_t byte = 0; byte < blocks * 4; byte += 64) {
        __builtin_prefetch((const uint8_t*)scale + byte, 0, 3);
        if (offset) __builtin_prefetch((const uint8_t*)offset + byte, 0, 3);
    }
}

// OFFSET: whether the layer has offsets. Without, a weight is its scaled code alone (adding
// -0.0 changes no float, see `weights`): the same bits, one addition fewer per 16 weights,
// which on one row of Gemma 3's 262,144-row Q8_0 head is most of what the kernel computes.
template <int ROWS, int64_t BLOCK, bool NIBBLES, bool OFFSET>
static void rows_product(const float* x, int64_t k_inputs, const uint8_t* codes,
                         const float* scale, const float* offset, float* out,
                         int64_t n_outputs, int64_t first, int64_t last) {
    const int64_t blocks = k_inputs / BLOCK;
    for (int64_t n = first; n < last; ++n) {
        floats acc[ROWS][CHAINS];
        for (int r = 0; r < ROWS; ++r)
            for (int j = 0; j < CHAINS; ++j) acc[r][j] = floats{};
        const uint8_t* row_codes = codes + n * row_bytes<NIBBLES>(k_inputs);
        const float* row_scale = scale + n * blocks;
        const float* row_offset = offset ? offset + n * blocks : nullptr;
        if (n + PREFETCH_ROWS < n_outputs)
            prefetch_row(row_codes + PREFETCH_ROWS * row_bytes<NIBBLES>(k_inputs),
                         row_bytes<NIBBLES>(k_inputs), row_scale + PREFETCH_ROWS * blocks,
                         row_offset ? row_offset + PREFETCH_ROWS * blocks : nullptr, blocks);
#if defined(__AVX512F__)
        if constexpr (NIBBLES) {
            const int64_t grouped = grouped_inputs(k_inputs);
            for (int64_t k = 0; k < grouped; k += GROUP_INPUTS)
                add_nibble_blocks<ROWS, 4>(acc, x, k_inputs, k,
                                           _mm512_loadu_si512((const void*)(row_codes + k / 2)),
                                           row_scale, row_offset);
            if (grouped < k_inputs)
                add_nibble_blocks<ROWS, 2>(acc, x, k_inputs, grouped,
                                           (__m512i)half_words(row_codes + grouped / 2),
                                           row_scale, row_offset);
        } else
#endif
            for (int64_t step = 0; step < k_inputs; step += CHAINS * LANES)
#pragma GCC unroll 4
                for (int j = 0; j < CHAINS; ++j) {
                    const int64_t k = step + LANES * j;
                    const int64_t b = k / BLOCK;  // a shift: BLOCK is constant
                    const ints step_codes = codes_at<NIBBLES>(row_codes, k_inputs, k);
                    add_products(acc, x, k_inputs, k, j,
                                 OFFSET ? weights(step_codes, row_scale[b], row_offset[b])
                                        : scaled(step_codes, row_scale[b]));
                }
        for (int r = 0; r < ROWS; ++r)
            out[r * n_outputs + n] = sum((acc[r][0] + acc[r][1]) + (acc[r][2] + acc[r][3]));
    }
}

typedef void (*rows_fn)(const float*, int64_t, const uint8_t*, const float*, const float*,
                        float*, int64_t, int64_t, int64_t);

// Rows computed together: their GROUP x CHAINS accumulators, the step's weights and an input
// fit in the vector registers (32 with AVX-512, 16 with AVX2).
#if defined(__AVX512F__)
constexpr int64_t GROUP = 4;
#define PRODUCTS(BLOCK, NIBBLES, OFFSET)                                                \
    {rows_product<1, BLOCK, NIBBLES, OFFSET>, rows_product<2, BLOCK, NIBBLES, OFFSET>,        \
     rows_product<3, BLOCK, NIBBLES, OFFSET>, rows_product<4, BLOCK, NIBBLES, OFFSET>}
#else
constexpr int64_t GROUP = 2;
#define PRODUCTS(BLOCK, NIBBLES, OFFSET) \
    {rows_product<1, BLOCK, NIBBLES, OFFSET>, rows_product<2, BLOCK, NIBBLES, OFFSET>}
#endif
// by block and offsets (a grouped 4-bit row's offsets go into its tables, once a block)
static const rows_fn PRODUCTS_BY_16[2][GROUP] = {PRODUCTS(16, false, false),
                                                 PRODUCTS(16, false, true)};
static const rows_fn PRODUCTS_BY_32[2][GROUP] = {PRODUCTS(32, false, false),
                                                 PRODUCTS(32, false, true)};
static const rows_fn PRODUCTS_OF_NIBBLES[GROUP] = PRODUCTS(32, true, true);

template <bool NIBBLES>
static void dequantize_rows(const uint8_t* codes, const float* scale, const float* offset,
                            int64_t k_inputs, int64_t block, const int64_t* index,
                            int64_t count, float* out) {
    const int64_t blocks = k_inputs / block;
#pragma omp parallel for schedule(static) if (count > 64)
    for (int64_t i = 0; i < count; ++i) {
        const int64_t n = index ? index[i] : i;
        const uint8_t* row_codes = codes + n * row_bytes<NIBBLES>(k_inputs);
        for (int64_t b = 0; b < blocks; ++b) {
            const float s = scale[n * blocks + b];
            const float o = offset ? offset[n * blocks + b] : -0.0f;
            for (int64_t k = b * block; k < (b + 1) * block; k += LANES) {
                const floats w = weights(codes_at<NIBBLES>(row_codes, k_inputs, k), s, o);
                std::memcpy(out + i * k_inputs + k, &w, sizeof w);
            }
        }
    }
}

// A decode step's attention, one (row, kv head) task: gs_decode_attention below. G query
// heads share the task's keys and values; G is a template parameter so that their
// accumulators stay in registers (with G read at run time the compiler kept the value sums
// in memory, a load and a store for each fma: the value pass took 60 cycles a key).

// scores[h * padded + j] = scale * (queries[h] . keys[j]) for the G heads; their maxima
template <int G>
static void scores_of(const float* queries, const float* keys, int64_t seq_stride, int64_t n,
                      int64_t dim, float scale, float* scores, int64_t padded, float* highest) {
    for (int h = 0; h < G; ++h) highest[h] = -__builtin_inff();
    for (int64_t j = 0; j < n; ++j) {
        floats acc[G] = {};
        for (int64_t d = 0; d < dim; d += LANES) {
            const floats k = load(keys + j * seq_stride + d);
            for (int h = 0; h < G; ++h)
                acc[h] = multiply_add(load(queries + h * dim + d), k, acc[h]);
        }
        for (int h = 0; h < G; ++h) {
            const float score = sum(acc[h]) * scale;
            scores[h * padded + j] = score;
            highest[h] = score > highest[h] ? score : highest[h];
        }
    }
}

// sums[h * dim + d ..] = sum over j, in order, of weights[h * padded + j] * values[j][d ..],
// for VECS vectors of dims from d: one fma chain a lane, whatever VECS
template <int G, int VECS>
static void weighted_values(const float* values, int64_t seq_stride, int64_t n,
                            const float* weights, int64_t padded, int64_t d, int64_t dim,
                            float* sums) {
    floats acc[G][VECS] = {};
    for (int64_t j = 0; j < n; ++j) {
        floats v[VECS];
        for (int c = 0; c < VECS; ++c) v[c] = load(values + j * seq_stride + d + c * LANES);
        for (int h = 0; h < G; ++h) {
            const floats w = floats{} + weights[h * padded + j];
            for (int c = 0; c < VECS; ++c) acc[h][c] = multiply_add(w, v[c], acc[h][c]);
        }
    }
    for (int h = 0; h < G; ++h)
        for (int c = 0; c < VECS; ++c)
            std::memcpy(sums + h * dim + d + c * LANES, &acc[h][c], sizeof(floats));
}

template <int G>
static void attend(const float* queries, const float* keys, const float* values,
                   int64_t seq_stride, int64_t n, int64_t dim, float scale,
                   std::vector<float>& scores, std::vector<float>& sums, float* out) {
    const int64_t padded = (n + LANES - 1) / LANES * LANES;
    scores.assign(G * padded, 0.0f);
    float highest[G];
    scores_of<G>(queries, keys, seq_stride, n, dim, scale, scores.data(), padded, highest);
    float total[G];
    for (int h = 0; h < G; ++h) {
        float* row = scores.data() + h * padded;
        floats acc = {};
        for (int64_t j = 0; j < padded; j += LANES) {
            floats e = exp_nonpositive(load(row + j) - highest[h]);
            if (j + LANES > n)  // the padding past the last key weighs nothing
                for (int64_t i = n - j; i < LANES; ++i) e[i] = 0.0f;
            std::memcpy(row + j, &e, sizeof e);
            acc += e;
        }
        total[h] = sum(acc);
    }
    sums.resize(G * dim);
    constexpr int WIDE = G <= 4 ? 4 : 2;  // accumulators G x WIDE within the registers
    int64_t d = 0;
    for (; d + WIDE * LANES <= dim; d += WIDE * LANES)
        weighted_values<G, WIDE>(values, seq_stride, n, scores.data(), padded, d, dim,
                                 sums.data());
    for (; d < dim; d += LANES)
        weighted_values<G, 1>(values, seq_stride, n, scores.data(), padded, d, dim, sums.data());
    for (int h = 0; h < G; ++h)
        for (int64_t i = 0; i < dim; ++i) out[h * dim + i] = sums[h * dim + i] / total[h];
}

typedef void (*attend_fn)(const float*, const float*, const float*, int64_t, int64_t, int64_t,
                          float, std::vector<float>&, std::vector<float>&, float*);
constexpr int64_t MAX_GROUP = 8;
static const attend_fn ATTEND[MAX_GROUP] = {attend<1>, attend<2>, attend<3>, attend<4>,
                                            attend<5>, attend<6>, attend<7>, attend<8>};

// gs_rotary's computation, out [rows, heads, dim] with strides (out_row_stride,
// out_head_stride, 1): a key goes straight into its column of the cache (gs_attention_step)
static void rotate_rows(const float* x, int64_t rows, int64_t heads, int64_t dim,
                        int64_t row_stride, int64_t head_stride, const float* cos,
                        const float* sin, float* out, int64_t out_row_stride,
                        int64_t out_head_stride) {
    const int64_t half = dim / 2;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t h = 0; h < heads; ++h) {
            const float* in = x + r * row_stride + h * head_stride;
            const float* c = cos + r * dim;
            const float* s = sin + r * dim;
            float* o = out + r * out_row_stride + h * out_head_stride;
            for (int64_t i = 0; i < half; ++i) o[i] = in[i] * c[i] + (-in[half + i]) * s[i];
            for (int64_t i = half; i < dim; ++i) o[i] = in[i] * c[i] + in[i - half] * s[i];
        }
}

extern "C" {

// out[m, n] = sum_k x[m, k] * w[n, k], for x [rows, k_inputs] and w given by its codes
// (n_outputs rows, in the layout `nibbles` says: 0 BYTES, 1 NIBBLES), scale and offset
// [n_outputs, k_inputs / block] (offset may be null: all zero). block is 16 or 32 (32 for
// NIBBLES); k_inputs a multiple of 64.
void gs_block_matmul(const float* x, int64_t rows, int64_t k_inputs, const uint8_t* codes,
                     int64_t nibbles, const float* scale, const float* offset, int64_t block,
                     float* out, int64_t n_outputs) {
    const rows_fn* products = nibbles         ? PRODUCTS_OF_NIBBLES
                              : block == 16     ? PRODUCTS_BY_16[offset != nullptr]
                                                : PRODUCTS_BY_32[offset != nullptr];
    const int64_t chunk = 16;
    const int64_t chunks = (n_outputs + chunk - 1) / chunk;
    // Every group of rows over one chunk of outputs before the next chunk: the chunk's codes
    // (a few KB) are read from memory once for all rows, and from cache by the later groups.
#pragma omp parallel for schedule(static)
    for (int64_t c = 0; c < chunks; ++c) {
        const int64_t first = c * chunk;
        const int64_t last = first + chunk < n_outputs ? first + chunk : n_outputs;
        for (int64_t done = 0; done < rows; done += GROUP) {
            const int64_t group = rows - done < GROUP ? rows - done : GROUP;
            products[group - 1](x + done * k_inputs, k_inputs, codes, scale, offset,
                                out + done * n_outputs, n_outputs, first, last);
        }
    }
}

// out[i, k] = w[index[i], k] for i < count (index null: the rows 0 .. count - 1 in order).
void gs_dequantize(const uint8_t* codes, int64_t nibbles, const float* scale,
                   const float* offset, int64_t k_inputs, int64_t block, const int64_t* index,
                   int64_t count, float* out) {
    if (nibbles)
        dequantize_rows<true>(codes, scale, offset, k_inputs, block, index, count, out);
    else
        dequantize_rows<false>(codes, scale, offset, k_inputs, block, index, count, out);
}

// Rotary position embedding of one position a row, as transformers' apply_rotary_pos_emb
// computes it for a query or key tensor (Llama, Gemma 3): out = x * cos + rotate_half(x) * sin,
// where rotate_half(x) = (-x[half:], x[:half]); each product and the sum rounded on its own,
// as those separate tensor ops round them (-ffp-contract=off), so the bits are theirs. x is
// [rows, heads, dim] with strides (row_stride, head_stride, 1), cos and sin [rows, dim]
// contiguous, out [rows, heads, dim] contiguous.
void gs_rotary(const float* x, int64_t rows, int64_t heads, int64_t dim, int64_t row_stride,
               int64_t head_stride, const float* cos, const float* sin, float* out) {
    rotate_rows(x, rows, heads, dim, row_stride, head_stride, cos, sin, out, heads * dim, dim);
}

// The elementwise tail of an RMS norm, after its mean of squares (which stays torch's own
// reduction, whose summation order this file does not reproduce), as transformers computes
// it: r = 1 / sqrt(variance + eps), each step rounded (torch's rsqrt is a division by a square
// root, both correctly rounded), then Llama's weight * (x * r), or Gemma 3's (x * r) *
// (1 + weight) where plus_one. x is [outer, inner, dim] with strides (outer_stride,
// inner_stride, 1); variance [outer * inner] and out [outer, inner, dim] contiguous.
void gs_rms_scale(const float* x, int64_t outer, int64_t inner, int64_t dim,
                  int64_t outer_stride, int64_t inner_stride, const float* variance, float eps,
                  const float* weight, int64_t plus_one, float* out) {
    for (int64_t r = 0; r < outer * inner; ++r) {
        const float root = 1.0f / __builtin_sqrtf(variance[r] + eps);
        const float* in = x + (r / inner) * outer_stride + (r % inner) * inner_stride;
        float* o = out + r * dim;
        if (plus_one)
            for (int64_t i = 0; i < dim; ++i) o[i] = (in[i] * root) * (1.0f + weight[i]);
        else
            for (int64_t i = 0; i < dim; ++i) o[i] = weight[i] * (in[i] * root);
    }
}

// One decode step's attention (one query a row) over each row's own keys: for row b and
// query head h (of kv head g = h / (heads / kv_heads)), out[b, h] = softmax(scale * q[b, h] .
// k[b, g, j]) . v[b, g, j] over j = starts[b] .. length - 1, every such column attended (no
// mask): the maximum score taken out before exp, the weighted values summed and divided by
// the sum of the weights at the end. Each (row, kv head) is one task, which reads its keys
// and values once for all its query heads and sums in a fixed order (keys in order, one fma
// chain over a head's dim), so a row's result depends neither on its batch nor on the number
// of threads. q is [rows, heads, dim] contiguous; key and value [rows, kv_heads, length, dim]
// with the given strides (dim contiguous, a multiple of LANES); out [rows, heads, dim]
// contiguous. At most MAX_GROUP query heads a kv head (gapscope.models.decode_attention).
void gs_decode_attention(const float* q, int64_t rows, int64_t heads, int64_t kv_heads,
                         int64_t dim, const float* key, const float* value, int64_t row_stride,
                         int64_t head_stride, int64_t seq_stride, const int64_t* starts,
                         int64_t length, float scale, float* out) {
    const int64_t group = heads / kv_heads;
    const attend_fn attend_group = ATTEND[group - 1];
    int64_t columns = 0;  // threads only where the keys and values read are worth waking them
    for (int64_t b = 0; b < rows; ++b) columns += length - starts[b];
#pragma omp parallel if (rows * kv_heads > 1 && columns * kv_heads * dim > (1 << 14))
    {
        std::vector<float> scores, sums;
#pragma omp for schedule(dynamic, 1)
        for (int64_t task = 0; task < rows * kv_heads; ++task) {
            const int64_t b = task / kv_heads, g = task % kv_heads;
            const int64_t first = starts[b];
            const int64_t at = b * row_stride + g * head_stride + first * seq_stride;
            const int64_t head = b * heads + g * group;  // the task's first query head
            attend_group(q + head * dim, key + at, value + at, seq_stride, length - first, dim,
                         scale, scores, sums, out + head * dim);
        }
    }
}

// A decode step's segments between torch's own reductions (the norms' means of squares) and
// activations, one call each (gapscope.models.decode_step): each is the functions above in
// turn, so its bits are theirs, and the tensor ops between them in a layer, each a few
// microseconds of dispatch for a few hundred floats, are gone.

// out = (x scaled as gs_rms_scale scales it) . w^T: a norm and the products that read it (a
// layer's query, key and value projections, or its gate and up ones). x [rows, dim] and
// variance [rows] contiguous; the weights as gs_block_matmul takes them.
void gs_norm_product(const float* x, int64_t rows, int64_t dim, const float* variance,
                     float eps, const float* weight, int64_t plus_one, const uint8_t* codes,
                     int64_t nibbles, const float* scale, const float* offset, int64_t block,
                     float* out, int64_t n_outputs) {
    thread_local std::vector<float> normed;
    normed.resize(rows * dim);
    gs_rms_scale(x, rows, 1, dim, dim, 0, variance, eps, weight, plus_one, normed.data());
    gs_block_matmul(normed.data(), rows, dim, codes, nibbles, scale, offset, block, out,
                    n_outputs);
}

// out = residual + x . w^T, each sum rounded as torch's addition rounds it; residual null:
// the product alone (Gemma 3 normalizes it before its residual sum, gs_norm_add)
void gs_product_add(const float* x, int64_t rows, int64_t k_inputs, const uint8_t* codes,
                    int64_t nibbles, const float* scale, const float* offset, int64_t block,
                    const float* residual, float* out, int64_t n_outputs) {
    gs_block_matmul(x, rows, k_inputs, codes, nibbles, scale, offset, block, out, n_outputs);
    if (residual)
        for (int64_t i = 0; i < rows * n_outputs; ++i) out[i] = residual[i] + out[i];
}

// out = residual + (x scaled as gs_rms_scale scales it): Gemma 3's norms after attention and
// after the MLP, with the residual sums that follow them. x, variance, residual and out
// contiguous ([rows, dim], [rows]).
void gs_norm_add(const float* x, int64_t rows, int64_t dim, const float* variance, float eps,
                 const float* weight, int64_t plus_one, const float* residual, float* out) {
    gs_rms_scale(x, rows, 1, dim, dim, 0, variance, eps, weight, plus_one, out);
    for (int64_t i = 0; i < rows * dim; ++i) out[i] = residual[i] + out[i];
}

// A decode step's attention from its projections: qkv [rows, (heads + 2 kv_heads) * dim]
// contiguous (queries, keys, values); with q_weight (Gemma 3) the queries' and keys' norms
// first (Gemma's, the weight plus one; variances [rows, heads] and [rows, kv_heads]); the
// rotary embedding of both; the key and value written into column `column` of the cache's
// buffers (strides as gs_decode_attention takes them), and the attention over each row's
// columns starts[row] .. column, into out [rows, heads, dim].
void gs_attention_step(const float* qkv, int64_t rows, int64_t heads, int64_t kv_heads,
                       int64_t dim, const float* q_variance, const float* k_variance,
                       float q_eps, float k_eps, const float* q_weight, const float* k_weight,
                       const float* cos, const float* sin, float* key, float* value,
                       int64_t row_stride, int64_t head_stride, int64_t seq_stride,
                       int64_t column, const int64_t* starts, float scale, float* out) {
    const int64_t width = (heads + 2 * kv_heads) * dim;
    const float* queries_in = qkv;
    const float* keys_in = qkv + heads * dim;
    const float* values_in = qkv + (heads + kv_heads) * dim;
    int64_t query_row = width, key_row = width;
    thread_local std::vector<float> queries, normed_queries, normed_keys;
    if (q_weight) {
        normed_queries.resize(rows * heads * dim);
        normed_keys.resize(rows * kv_heads * dim);
        gs_rms_scale(queries_in, rows, heads, dim, width, dim, q_variance, q_eps, q_weight, 1,
                     normed_queries.data());
        gs_rms_scale(keys_in, rows, kv_heads, dim, width, dim, k_variance, k_eps, k_weight, 1,
                     normed_keys.data());
        queries_in = normed_queries.data(), query_row = heads * dim;
        keys_in = normed_keys.data(), key_row = kv_heads * dim;
    }
    queries.resize(rows * heads * dim);
    rotate_rows(queries_in, rows, heads, dim, query_row, dim, cos, sin, queries.data(),
                heads * dim, dim);
    rotate_rows(keys_in, rows, kv_heads, dim, key_row, dim, cos, sin,
                key + column * seq_stride, row_stride, head_stride);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t g = 0; g < kv_heads; ++g)
            std::memcpy(value + r * row_stride + g * head_stride + column * seq_stride,
                        values_in + r * width + g * dim, dim * sizeof(float));
    gs_decode_attention(queries.data(), rows, heads, kv_heads, dim, key, value, row_stride,
                        head_stride, seq_stride, starts, column + 1, scale, out);
}

}  // extern "C"
