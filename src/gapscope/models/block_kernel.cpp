// Linear layers whose weights are a GGUF's quantization codes, evaluated exactly.
//
// Each weight is w = fl(fl(scale * code) + offset), one scale and offset per block of `block`
// (16 or 32) consecutive inputs of an output row: the same two roundings, in the same order,
// as the dequantization that wrote the fp32 checkpoint (gguf-py, numpy), so every weight this
// file computes is bitwise the checkpoint's (see weights16 on keeping the compiler from fusing
// them into one fma, which rounds once).
//
// gs_block_matmul is the decode-step product out = x . w^T for a few rows of x: it reads the
// codes (1 byte a weight, against fp32's 4) once per 4 rows and sums in fp32. A row's sums are
// taken in the same order whatever the other rows of its batch are, so a row decodes the same
// batched and alone. gs_dequantize writes fp32 weights, for products with many rows (prefill),
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

typedef float floats16 __attribute__((vector_size(64)));
typedef int8_t codes16 __attribute__((vector_size(16)));
typedef int32_t ints16 __attribute__((vector_size(64)));

static inline ints16 widen16(const int8_t* codes) {
    // gcc 12 leaves __builtin_convertvector from 16 int8 to 16 int32 as scalar code
#if defined(__AVX512F__)
    return (ints16)_mm512_cvtepi8_epi32(_mm_loadu_si128((const __m128i*)codes));
#elif defined(__AVX2__)
    ints16 wide;
    const __m256i low = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i*)codes));
    const __m256i high = _mm256_cvtepi8_epi32(_mm_loadl_epi64((const __m128i*)(codes + 8)));
    std::memcpy(&wide, &low, 32);
    std::memcpy((char*)&wide + 32, &high, 32);
    return wide;
#else
    codes16 raw;
    std::memcpy(&raw, codes, sizeof raw);
    return __builtin_convertvector(raw, ints16);
#endif
}

static inline floats16 weights16(const int8_t* codes, float scale, float offset) {
    floats16 w = __builtin_convertvector(widen16(codes), floats16) * scale;
    // never fused with the product (-ffp-contract=off). No offset is passed as -0.0, which
    // leaves every float as it is (-0.0 + 0.0 would be +0.0: gguf-py adds nothing there)
    return w + offset;
}

static inline floats16 multiply_add16(floats16 x, floats16 w, floats16 acc) {
    // acc + x * w; an fma where the CPU has one (the weights above must not be fused, these
    // sums may: the compiler is told not to fuse, so the fma is asked for by name)
#if defined(__AVX512F__)
    return (floats16)_mm512_fmadd_ps((__m512)x, (__m512)w, (__m512)acc);
#elif defined(__AVX2__) && defined(__FMA__)
    __m256 halves[3][2];
    std::memcpy(halves[0], &x, 64);
    std::memcpy(halves[1], &w, 64);
    std::memcpy(halves[2], &acc, 64);
    for (int h = 0; h < 2; ++h)
        halves[2][h] = _mm256_fmadd_ps(halves[0][h], halves[1][h], halves[2][h]);
    std::memcpy(&acc, halves[2], 64);
    return acc;
#else
    return acc + x * w;
#endif
}

static inline floats16 load16(const float* x) {
    floats16 v;
    std::memcpy(&v, x, sizeof v);
    return v;
}

static inline float sum16(floats16 v) {
    // a fixed pairwise order: the same for every row and call
    float half8[8], half4[4];
    for (int i = 0; i < 8; ++i) half8[i] = v[i] + v[i + 8];
    for (int i = 0; i < 4; ++i) half4[i] = half8[i] + half8[i + 4];
    return (half4[0] + half4[2]) + (half4[1] + half4[3]);
}

constexpr int64_t STEP = 64;
constexpr int CHAINS = STEP / 16;
// Each row sums its products in CHAINS independent 16-lane accumulators (input chunk j of a
// step goes to chain j), added in a fixed order at the end: one chain would wait on the
// latency of every addition. The order is the same for every number of rows, so a row's
// result never depends on its batch.

template <int ROWS, int64_t BLOCK>
static void rows_product(const float* x, int64_t k_inputs, const int8_t* codes,
                         const float* scale, const float* offset, float* out,
                         int64_t n_outputs, int64_t first, int64_t last) {
    const int64_t blocks = k_inputs / BLOCK;
    for (int64_t n = first; n < last; ++n) {
        floats16 acc[ROWS][CHAINS];
        for (int r = 0; r < ROWS; ++r)
            for (int j = 0; j < CHAINS; ++j) acc[r][j] = floats16{};
        const int8_t* row_codes = codes + n * k_inputs;
        const float* row_scale = scale + n * blocks;
        const float* row_offset = offset ? offset + n * blocks : nullptr;
        for (int64_t k = 0; k < k_inputs; k += STEP) {
            floats16 w[CHAINS];
            for (int j = 0; j < CHAINS; ++j) {
                const int64_t b = (k + 16 * j) / BLOCK;  // a shift: BLOCK is a constant
                w[j] = weights16(row_codes + k + 16 * j, row_scale[b],
                                 row_offset ? row_offset[b] : -0.0f);
            }
            for (int r = 0; r < ROWS; ++r)
                for (int j = 0; j < CHAINS; ++j)
                    acc[r][j] = multiply_add16(load16(x + r * k_inputs + k + 16 * j), w[j], acc[r][j]);
        }
        for (int r = 0; r < ROWS; ++r)
            out[r * n_outputs + n] = sum16((acc[r][0] + acc[r][1]) + (acc[r][2] + acc[r][3]));
    }
}

typedef void (*rows_fn)(const float*, int64_t, const int8_t*, const float*, const float*,
                        float*, int64_t, int64_t, int64_t);

constexpr int64_t GROUP = 4;
// rows computed together: their 4 x CHAINS accumulators and the step's weights fit in the 32
// vector registers of AVX-512
static const rows_fn PRODUCTS_BY_16[GROUP] = {
    rows_product<1, 16>, rows_product<2, 16>, rows_product<3, 16>, rows_product<4, 16>,
};
static const rows_fn PRODUCTS_BY_32[GROUP] = {
    rows_product<1, 32>, rows_product<2, 32>, rows_product<3, 32>, rows_product<4, 32>,
};

extern "C" {

// out[m, n] = sum_k x[m, k] * w[n, k], for x [rows, k_inputs] and w given by its codes
// [n_outputs, k_inputs], scale and offset [n_outputs, k_inputs / block] (offset may be null:
// all zero). block is 16 or 32; k_inputs a multiple of 64.
void gs_block_matmul(const float* x, int64_t rows, int64_t k_inputs, const int8_t* codes,
                     const float* scale, const float* offset, int64_t block, float* out,
                     int64_t n_outputs) {
    const int64_t chunk = 16;
    const int64_t chunks = (n_outputs + chunk - 1) / chunk;
    for (int64_t done = 0; done < rows; done += GROUP) {
        const int64_t group = rows - done < GROUP ? rows - done : GROUP;
        const rows_fn product = (block == 16 ? PRODUCTS_BY_16 : PRODUCTS_BY_32)[group - 1];
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
void gs_dequantize(const int8_t* codes, const float* scale, const float* offset,
                   int64_t k_inputs, int64_t block, const int64_t* index, int64_t count,
                   float* out) {
    const int64_t blocks = k_inputs / block;
#pragma omp parallel for schedule(static) if (count > 64)
    for (int64_t i = 0; i < count; ++i) {
        const int64_t n = index ? index[i] : i;
        for (int64_t b = 0; b < blocks; ++b) {
            const float s = scale[n * blocks + b];
            const float o = offset ? offset[n * blocks + b] : -0.0f;
            for (int64_t k = b * block; k < (b + 1) * block; k += 16) {
                const floats16 w = weights16(codes + n * k_inputs + k, s, o);
                std::memcpy(out + i * k_inputs + k, &w, sizeof w);
            }
        }
    }
}

}  // extern "C"
