/* Raw Vulkan floor for submit+wait: one pre-recorded empty command buffer, one
   reused fence, waited on with vkWaitForFences or by spinning on vkGetFenceStatus.
   Also reports the limits Kompute's Python API does not expose.
   Prints one JSON object. Build: gcc -O2 vk_submit_probe.c -o vk_submit_probe -lvulkan
   Usage: vk_submit_probe [device_index] [reps] */
#include "vk_probe.h"

int main(int argc, char **argv) {
  uint32_t want = argc > 1 ? (uint32_t)atoi(argv[1]) : 0;
  int reps = argc > 2 ? atoi(argv[2]) : 2000;
  Probe p = open_probe(want);
  VkDevice device = p.device;
  VkQueue queue = p.queue;
  VkCommandBuffer cmd = p.cmd;
  VkFence fence = p.fence;
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(p.pd, &props);
  VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, 0, NULL};
  CHECK(vkBeginCommandBuffer(cmd, &begin));
  CHECK(vkEndCommandBuffer(cmd));
  VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cmd, 0, NULL};

  double *t = malloc(sizeof(double) * (size_t)reps);
  double median[2];
  for (int spin = 0; spin < 2; spin++) {
    for (int r = -50; r < reps; r++) {  /* 50 warm-up submissions */
      double t0 = now_us();
      CHECK(vkQueueSubmit(queue, 1, &submit, fence));
      if (spin) { while (vkGetFenceStatus(device, fence) == VK_NOT_READY) { } }
      else CHECK(vkWaitForFences(device, 1, &fence, VK_TRUE, UINT64_MAX));
      double t1 = now_us();
      CHECK(vkResetFences(device, 1, &fence));
      if (r >= 0) t[r] = t1 - t0;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    median[spin] = t[reps / 2];
  }
  printf("{\"device\": \"%s\", \"timestamp_period_ns\": %.4f, \"max_storage_buffer_range\": %u, "
         "\"max_compute_shared_memory\": %u, \"submit_wait_fence_us\": %.2f, \"submit_wait_spin_us\": %.2f}\n",
         props.deviceName, props.limits.timestampPeriod, props.limits.maxStorageBufferRange,
         props.limits.maxComputeSharedMemorySize, median[0], median[1]);
  free(t);
  vkDestroyFence(device, fence, NULL);
  vkDestroyCommandPool(device, p.pool, NULL);
  vkDestroyDevice(device, NULL);
  vkDestroyInstance(p.instance, NULL);
  return 0;
}
