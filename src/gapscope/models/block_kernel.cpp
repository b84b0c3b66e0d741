// Linear layers whose weights are a GGUF's quantization codes, evaluated exactly.
//
// Each weight is w = fl(fl(scale * code) + offset), one scale and offset per block of `block`
// (16 or 32) consecutive inputs of an output row: the same two roundings, in the same order,
// as the dequantization that wrote the fp32 checkpoint (gguf-py, numpy), so every weight this
// file computes is bitwise the checkpoint's (see `weights` on keeping the compiler from
// fusing them into one fma, which rounds once).
//
// gs_block_matmul is the decode-step product out = x . w^T for a few rows of x: it reads the
// codes (1 byte a weight, or half, against fp32's 4) once per group of rows (4 with AVX-512, else 2)
// and sums in fp32. A row's sums are taken in the same order whatever the other rows of its
// batch are, so a row decodes the same batched and alone. gs_dequantize writes fp32 weights, for products with many rows (prefill),
// which then go to the BLAS exactly as the fp32 checkpoint's would.
//
// Threads: OpenMP. torch's CPU build ships libgomp.so.1 and loads it first, so this library
// shares torch's OpenMP runtime and thread count (torch.set_num_threads) instead of starting
// a second pool that would spin against it.

#include <cstdint>
#include <cstring>
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

static inline ints widen_nibbles(const uint8_t* bytes, bool high) {
    // LANES codes 0..15 from LANES bytes: their low nibbles, or their high ones
#if defined(__AVX512F__)
    __m128i packed = _mm_loadu_si128((const __m128i*)bytes);
    if (high) packed = _mm_srli_epi16(packed, 4);
    return (ints)_mm512_cvtepu8_epi32(_mm_and_si128(packed, _mm_set1_epi8(0x0F)));
#elif defined(__AVX2__)
    __m128i packed = _mm_loadl_epi64((const __m128i*)bytes);
    if (high) packed = _mm_srli_epi16(packed, 4);
    return (ints)_mm256_cvtepu8_epi32(_mm_and_si128(packed, _mm_set1_epi8(0x0F)));
#else
    typedef uint8_t bytes_t __attribute__((vector_size(LANES)));
    bytes_t raw;
    std::memcpy(&raw, bytes, sizeof raw);
    raw = high ? raw >> 4 : raw & 0x0F;
    return __builtin_convertvector(raw, ints);
#endif
}

// Where the codes of inputs i .. i + LANES - 1 of a row are, in one of two layouts:
// BYTES, one int8 code a byte; NIBBLES (4-bit codes, blocks of 32: Q4_1, Q4_K), ggml's own
// order, each block's 16 bytes holding its codes 0-15 in their low nibbles and 16-31 in their
// high ones. Both give the same weights, so a layer computes the same in either.
template <bool NIBBLES>
static inline ints codes_at(const uint8_t* row, int64_t i) {
    if (NIBBLES) return widen_nibbles(row + (i / 32) * 16 + i % 16, (i % 32) >= 16);
    return widen((const int8_t*)row + i);
}

template <bool NIBBLES>
static inline int64_t row_bytes(int64_t k_inputs) {
    return NIBBLES ? k_inputs / 2 : k_inputs;
}

static inline floats weights(ints codes, float scale, float offset) {
    floats w = __builtin_convertvector(codes, floats) * scale;
    // never fused with the product (-ffp-contract=off). No offset is passed as -0.0, which
    // leaves every float as it is (-0.0 + 0.0 would be +0.0: gguf-py adds nothing there)
    return w + offset;
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
    // a fixed pairwise order: the same for every row and call
    float lanes[LANES];
    std::memcpy(lanes, &v, sizeof lanes);
    for (int width = LANES / 2; width >= 1; width /= 2)
        for (int i = 0; i < width; ++i) lanes[i] += lanes[i + width];
    return lanes[0];
}

constexpr int CHAINS = 4;
constexpr int64_t STEP = CHAINS * LANES;
// Each row sums its products in CHAINS independent accumulators (input chunk j of a step goes
// to chain j), added in a fixed order at the end: one chain would wait on the latency of
// every addition. The order is the same for every number of rows, so a row's result never
// depends on its batch.

template <int ROWS, int64_t BLOCK, bool NIBBLES>
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
        for (int64_t k = 0; k < k_inputs; k += STEP) {
            floats w[CHAINS];
#if defined(__AVX512F__)
            if constexpr (NIBBLES) {
                // a step is two blocks of 32 4-bit codes: each block's 16 possible weights
                // once (table16), then each weight picked by its code
                for (int half = 0; half < 2; ++half) {
                    const int64_t b = k / 32 + half;
                    const __m512 table = (__m512)table16(row_scale[b],
                                                         row_offset ? row_offset[b] : -0.0f);
                    const __m128i packed = _mm_loadu_si128((const __m128i*)(row_codes + b * 16));
                    const __m128i low = _mm_and_si128(packed, _mm_set1_epi8(0x0F));
                    const __m128i high = _mm_and_si128(_mm_srli_epi16(packed, 4),
                                                       _mm_set1_epi8(0x0F));
                    w[2 * half] = (floats)_mm512_permutexvar_ps(_mm512_cvtepu8_epi32(low), table);
                    w[2 * half + 1] =
                        (floats)_mm512_permutexvar_ps(_mm512_cvtepu8_epi32(high), table);
                }
            } else
#endif
                for (int j = 0; j < CHAINS; ++j) {
                    const int64_t b = (k + LANES * j) / BLOCK;  // a shift: BLOCK is constant
                    w[j] = weights(codes_at<NIBBLES>(row_codes, k + LANES * j), row_scale[b],
                                   row_offset ? row_offset[b] : -0.0f);
                }
            for (int r = 0; r < ROWS; ++r)
                for (int j = 0; j < CHAINS; ++j)
                    acc[r][j] = multiply_add(load(x + r * k_inputs + k + LANES * j), w[j],
                                             acc[r][j]);
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
#define PRODUCTS(BLOCK, NIBBLES)                                                        \
    {rows_product<1, BLOCK, NIBBLES>, rows_product<2, BLOCK, NIBBLES>,                \
     rows_product<3, BLOCK, NIBBLES>, rows_product<4, BLOCK, NIBBLES>}
#else
constexpr int64_t GROUP = 2;
#define PRODUCTS(BLOCK, NIBBLES) {rows_product<1, BLOCK, NIBBLES>, rows_product<2, BLOCK, NIBBLES>}
#endif
static const rows_fn PRODUCTS_BY_16[GROUP] = PRODUCTS(16, false);
static const rows_fn PRODUCTS_BY_32[GROUP] = PRODUCTS(32, false);
static const rows_fn PRODUCTS_OF_NIBBLES[GROUP] = PRODUCTS(32, true);

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
                const floats w = weights(codes_at<NIBBLES>(row_codes, k), s, o);
                std::memcpy(out + i * k_inputs + k, &w, sizeof w);
            }
        }
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
    const rows_fn* products =
        nibbles ? PRODUCTS_OF_NIBBLES : (block == 16 ? PRODUCTS_BY_16 : PRODUCTS_BY_32);
    const int64_t chunk = 16;
    const int64_t chunks = (n_outputs + chunk - 1) / chunk;
    for (int64_t done = 0; done < rows; done += GROUP) {
        const int64_t group = rows - done < GROUP ? rows - done : GROUP;
        const rows_fn product = products[group - 1];
        const float* group_x = x + done * k_inputs;
        float* group_out = out + done * n_outputs;
#pragma omp parallel for schedule(static)
        for (int64_t c = 0; c < chunks; ++c) {
            const int64_t first = c * chunk;
            const int64_t last = first + chunk < n_outputs ? first + chunk : n_outputs;
            product(group_x, k_inputs, codes, scale, offset, group_out, n_outputs, first,
                    last);
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

}  // extern "C"
