// The GPU backend's probe (kernels/cuda/backend.h): on any machine it answers without crashing or
// hanging, and its answer is consistent: usable means devices and no reason; not usable means a
// reason. A GPU machine (tools/gpu_check.sh) sees the first case, CI the second.
#include "gtest/gtest.h"
#include "kernels/cuda/backend.h"

namespace pj::cuda {
namespace {

TEST(CudaBackend, ProbeIsConsistent) {
  const BackendInfo& b = backend();
  EXPECT_EQ(&b, &backend());  // probed once
  if (!b.built) {
    EXPECT_FALSE(b.usable);
    EXPECT_NE(b.why.find("built without the GPU backend"), std::string::npos) << b.why;
    return;
  }
  EXPECT_EQ(b.built_with.rfind("CUDA ", 0), 0u) << b.built_with;
  if (b.usable) {
    EXPECT_TRUE(b.why.empty()) << b.why;
    ASSERT_FALSE(b.devices.empty());
    EXPECT_GT(b.driver_version, 0);
    EXPECT_GE(b.driver_version, b.runtime_version);
    for (const DeviceInfo& d : b.devices) {
      EXPECT_FALSE(d.name.empty());
      EXPECT_GT(d.total_memory, 0u);
      EXPECT_GT(d.multiprocessors, 0);
    }
  } else {
    EXPECT_FALSE(b.why.empty());
  }
}

TEST(CudaBackend, VersionText) {
  EXPECT_EQ(cuda_version_text(13000), "13.0");
  EXPECT_EQ(cuda_version_text(12040), "12.4");
  EXPECT_EQ(cuda_version_text(0), "");
}

}  // namespace
}  // namespace pj::cuda
