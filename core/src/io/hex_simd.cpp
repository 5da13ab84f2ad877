// The vector files' 4-digit values (binary16/bfloat16 patterns, `matcore sample`'s native form)
// parsed with AVX2, six values at a time (a line's last six once more where K is not a multiple of
// six), for the grid engine of validate.cpp (hex.hpp
// hex4_prefix). Each 16-byte half of a register holds three "hhhh " tokens: a byte shuffle
// gathers their 12 hex characters, range tests classify them (0-9, a-f, A-F), one
// multiply-add joins each pair of nibbles into a byte and a second each pair of bytes into a
// value. The separators are compared at their fixed places. Anything else: the caller's
// scalar parser (SWAR), which then reports the same errors as before.
#include "hex.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace mc::hex {

#if defined(__x86_64__)
namespace {

/// Six tokens at p into out[0..5]; last: the sixth one's separator is the line's '\n'.
__attribute__((target("avx2"))) inline bool hex4_six(const char* p, uint64_t* out, bool last) {
  // per 16-byte half: tokens at bytes 0-3, 5-8, 10-13; separators at 4, 9, 14
  const __m256i gather = _mm256_setr_epi8(0, 1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, -1, -1, -1, -1,  //
                                          0, 1, 2, 3, 5, 6, 7, 8, 10, 11, 12, 13, -1, -1, -1, -1);
  constexpr uint32_t kSep = (1u << 4) | (1u << 9) | (1u << 14), kSeps = kSep | (kSep << 16);
  constexpr uint32_t kHex12 = 0x0FFFu | (0x0FFFu << 16);
  const __m256i raw = _mm256_inserti128_si256(
      _mm256_castsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))),
      _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 15)), 1);
  const uint32_t sep = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(raw, _mm256_set1_epi8(' '))));
  if ((sep & kSeps) != (last ? kSeps & ~(1u << 30) : kSeps) || (last && p[29] != '\n')) return false;
  const __m256i ch = _mm256_shuffle_epi8(raw, gather);
  const __m256i d = _mm256_sub_epi8(ch, _mm256_set1_epi8('0'));
  const __m256i is_d = _mm256_cmpeq_epi8(_mm256_min_epu8(d, _mm256_set1_epi8(9)), d);
  const __m256i l = _mm256_sub_epi8(_mm256_or_si256(ch, _mm256_set1_epi8(0x20)), _mm256_set1_epi8('a'));
  const __m256i is_l = _mm256_cmpeq_epi8(_mm256_min_epu8(l, _mm256_set1_epi8(5)), l);
  const uint32_t ok = static_cast<uint32_t>(_mm256_movemask_epi8(_mm256_or_si256(is_d, is_l)));
  if ((ok & kHex12) != kHex12) return false;
  const __m256i nib = _mm256_blendv_epi8(_mm256_add_epi8(l, _mm256_set1_epi8(10)), d, is_d);
  // bytes (16, 1): high nibble x 16 + low; then words (256, 1): high byte x 256 + low
  const __m256i v = _mm256_madd_epi16(_mm256_maddubs_epi16(nib, _mm256_set1_epi16(0x0110)), _mm256_set1_epi32(0x00010100));
  // out[0..3] (out[3] = 0, then the second half's first value), out[3..4], out[5]
  const __m128i hi = _mm256_extracti128_si256(v, 1);
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(out), _mm256_cvtepu32_epi64(_mm256_castsi256_si128(v)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out + 3), _mm_cvtepu32_epi64(hi));
  out[5] = static_cast<uint32_t>(_mm_extract_epi32(hi, 2));
  return true;
}

__attribute__((target("avx2"))) int hex4_avx2(const char* p, int K, uint64_t* out) {
  int k = 0;
  for (; k + 6 <= K; k += 6)
    if (!hex4_six(p + 5 * k, out + k, k + 6 == K)) return -1;
  // the rest: the line's last six tokens once more (overlapping the ones before)
  if (k < K && K >= 6) {
    if (!hex4_six(p + 5 * (K - 6), out + K - 6, true)) return -1;
    k = K;
  }
  return k;
}

/// n lines of K >= 6 tokens, line i at p + i * len, into out + i * K.
__attribute__((target("avx2"))) bool hex4_lines_avx2(const char* p, size_t n, int K, size_t len, uint64_t* out) {
  for (size_t i = 0; i < n; ++i, p += len, out += K)
    if (hex4_avx2(p, K, out) != K) return false;
  return true;
}

using Hex4Fn = int (*)(const char*, int, uint64_t*);
// (an AVX-512 form of twelve tokens at a time measured no faster: the copy out of the page
// cache, the kernel and the c/d lines take the rest)
Hex4Fn choose_hex4() { return __builtin_cpu_supports("avx2") ? &hex4_avx2 : nullptr; }
const Hex4Fn kHex4 = choose_hex4();

}  // namespace

int hex4_prefix(const char* p, int K, uint64_t* out) { return kHex4 ? kHex4(p, K, out) : 0; }
bool hex4_lines(const char* p, size_t n, int K, size_t len, uint64_t* out) {
  return kHex4 && K >= 6 && static_cast<size_t>(K) * 5 == len && hex4_lines_avx2(p, n, K, len, out);
}
#else
int hex4_prefix(const char*, int, uint64_t*) { return 0; }
bool hex4_lines(const char*, size_t, int, size_t, uint64_t*) { return false; }
#endif

}  // namespace mc::hex
