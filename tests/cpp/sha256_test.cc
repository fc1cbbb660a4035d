// SHA-256 (common/sha256.h) against FIPS 180-4's examples and the padding's edge lengths, one-shot
// and fed in every split.
#include <gtest/gtest.h>

#include <string>

#include "common/sha256.h"

namespace pj {
namespace {

TEST(Sha256, Fips180Examples) {
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(sha256_hex("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu"),
            "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1");
  EXPECT_EQ(sha256_hex(std::string(1000000, 'a')), "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Lengths where the padding takes one block or spills into a second.
TEST(Sha256, PaddingEdges) {
  const std::pair<size_t, const char*> cases[] = {
      {55, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"},
      {56, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"},
      {63, "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34"},
      {64, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"},
      {119, "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb"},
      {120, "2f3d335432c70b580af0e8e1b3674a7c020d683aa5f73aaaedfdc55af904c21c"}};
  for (const auto& [n, hex] : cases) EXPECT_EQ(sha256_hex(std::string(n, 'a')), hex) << n;
}

TEST(Sha256, AnySplitOfTheInputGivesTheSameDigest) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += char(i * 37 + 11);
  const std::string whole = sha256_hex(text);
  for (size_t a = 0; a <= text.size(); a += 7)
    for (size_t b = a; b <= text.size(); b += 13) {
      Sha256 h;
      h.update(text.data(), a);
      h.update(text.data() + a, b - a);
      h.update(text.data() + b, text.size() - b);
      ASSERT_EQ(to_hex(h.finish()), whole) << a << " " << b;
    }
}

// Every length across the block boundaries, against Python's hashlib (tools/run_tests.sh runs the
// Sha256 tests again with PIJIT_SHA=portable where the CPU has the SHA extensions: both code paths
// give these answers).
TEST(Sha256, EveryLengthUpToThreeBlocksAndSplitUpdates) {
  std::string s, all;
  for (int n = 0; n < 200; ++n) {
    s.push_back(static_cast<char>((n * 7 + 3) & 255));
    all += sha256_hex(s);
    Sha256 split;  // the same bytes in two updates, split anywhere
    split.update(s.substr(0, n / 3));
    split.update(s.substr(n / 3));
    EXPECT_EQ(to_hex(split.finish()), sha256_hex(s)) << n;
  }
  EXPECT_EQ(sha256_hex(all), "aa5a299921a9f182ee472afb627127495e6cb222cd401de470995a87e054614f");
}

}  // namespace
}  // namespace pj
