/* Shared by the raw Vulkan probes (vk_submit_probe.c, vk_dispatch_probe.c): timing, sorting and
   opening device `want` with one queue of the first compute family, as Kompute does, one command
   buffer (re-recordable) and one unsignalled fence. */
#ifndef VYRE_VK_PROBE_H
#define VYRE_VK_PROBE_H
#include <vulkan/vulkan.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define CHECK(call) do { VkResult r_ = (call); if (r_ != VK_SUCCESS) { \
  fprintf(stderr, "%s failed: %d\n", #call, (int)r_); exit(1); } } while (0)

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

typedef struct {
  VkInstance instance; VkPhysicalDevice pd; VkDevice device; VkQueue queue; uint32_t family;
  VkCommandPool pool; VkCommandBuffer cmd; VkFence fence;
} Probe;

static Probe open_probe(uint32_t want) {
  Probe p;
  VkApplicationInfo app = {VK_STRUCTURE_TYPE_APPLICATION_INFO, NULL, "vyre-vk-probe", 1, "vyre-vk", 1, VK_API_VERSION_1_1};
  VkInstanceCreateInfo ici = {VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO, NULL, 0, &app, 0, NULL, 0, NULL};
  CHECK(vkCreateInstance(&ici, NULL, &p.instance));
  uint32_t count = 0;
  CHECK(vkEnumeratePhysicalDevices(p.instance, &count, NULL));
  if (want >= count || count > 16) { fprintf(stderr, "no Vulkan device %u (%u found)\n", want, count); exit(1); }
  VkPhysicalDevice devices[16];
  CHECK(vkEnumeratePhysicalDevices(p.instance, &count, devices));
  p.pd = devices[want];
  uint32_t nfam = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(p.pd, &nfam, NULL);
  VkQueueFamilyProperties fams[32];
  if (nfam > 32) nfam = 32;
  vkGetPhysicalDeviceQueueFamilyProperties(p.pd, &nfam, fams);
  p.family = UINT32_MAX;
  for (uint32_t i = 0; i < nfam && p.family == UINT32_MAX; i++)
    if (fams[i].queueFlags & VK_QUEUE_COMPUTE_BIT) p.family = i;  /* Kompute's choice too */
  if (p.family == UINT32_MAX) { fprintf(stderr, "no compute queue\n"); exit(1); }
  float priority = 1.0f;
  VkDeviceQueueCreateInfo qci = {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO, NULL, 0, p.family, 1, &priority};
  VkDeviceCreateInfo dci = {VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO, NULL, 0, 1, &qci, 0, NULL, 0, NULL, NULL};
  CHECK(vkCreateDevice(p.pd, &dci, NULL, &p.device));
  vkGetDeviceQueue(p.device, p.family, 0, &p.queue);
  VkCommandPoolCreateInfo pci = {VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO, NULL,
                                 VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT, p.family};
  CHECK(vkCreateCommandPool(p.device, &pci, NULL, &p.pool));
  VkCommandBufferAllocateInfo cai = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO, NULL, p.pool,
                                     VK_COMMAND_BUFFER_LEVEL_PRIMARY, 1};
  CHECK(vkAllocateCommandBuffers(p.device, &cai, &p.cmd));
  VkFenceCreateInfo fci = {VK_STRUCTURE_TYPE_FENCE_CREATE_INFO, NULL, 0};
  CHECK(vkCreateFence(p.device, &fci, NULL, &p.fence));
  return p;
}
#endif
