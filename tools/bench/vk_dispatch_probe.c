/* Raw Vulkan floor for the tiny-kernel round trip (tools/bench/run.py's latency section), by the
   memory type of its two buffers: copy 64 uints in, submit a pre-recorded dispatch + host-read
   barrier, spin on the fence, copy 64 uints out, check them. Kompute puts host tensors in the first
   HOST_VISIBLE|HOST_COHERENT type ("first": write-combined system memory on NVIDIA); the other
   choices are HOST_CACHED system memory ("cached") and DEVICE_LOCAL|HOST_VISIBLE ("bar"). Also
   times a host read of 4 MiB from each type (the download of a large output) and an empty
   submission and a dispatch of an empty shader, so the parts add up.
   Prints one JSON object. Build: gcc -O2 vk_dispatch_probe.c -o vk_dispatch_probe -lvulkan
   Usage: vk_dispatch_probe TINY.spv EMPTY.spv [device_index] [reps]
   TINY.spv: binding 0 readonly uint a[], binding 1 uint o[], o[i] = a[i] + 1 for i < 64, local size 64. */
#include "vk_probe.h"
#include <string.h>

#define N 64
#define BIG (4u << 20)

static VkDevice dev;
static VkPhysicalDeviceMemoryProperties mem;

/* the first memory type allowed by `bits` having all of `want` and none of `avoid`; -1 if none */
static int pick(uint32_t bits, VkMemoryPropertyFlags want, VkMemoryPropertyFlags avoid) {
  for (uint32_t i = 0; i < mem.memoryTypeCount; i++) {
    VkMemoryPropertyFlags f = mem.memoryTypes[i].propertyFlags;
    if ((bits & (1u << i)) && (f & want) == want && !(f & avoid)) return (int)i;
  }
  return -1;
}

typedef struct { VkBuffer buf; VkDeviceMemory mem; void *map; int type; } Buf;

static const char *KINDS[] = {"first", "cached", "bar"};

/* kind 0: Kompute's pick; 1: host-cached; 2: device-local and host-visible. type -1: unavailable */
static Buf make(VkDeviceSize size, int kind) {
  Buf b = {0};
  VkBufferCreateInfo bci = {VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, NULL, 0, size,
                            VK_BUFFER_USAGE_STORAGE_BUFFER_BIT, VK_SHARING_MODE_EXCLUSIVE, 0, NULL};
  CHECK(vkCreateBuffer(dev, &bci, NULL, &b.buf));
  VkMemoryRequirements req;
  vkGetBufferMemoryRequirements(dev, b.buf, &req);
  VkMemoryPropertyFlags hv = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  b.type = kind == 0 ? pick(req.memoryTypeBits, hv, 0)
         : kind == 1 ? pick(req.memoryTypeBits, hv | VK_MEMORY_PROPERTY_HOST_CACHED_BIT, 0)
         : pick(req.memoryTypeBits, hv | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, 0);
  if (b.type < 0) { vkDestroyBuffer(dev, b.buf, NULL); b.buf = VK_NULL_HANDLE; return b; }
  VkMemoryAllocateInfo mai = {VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO, NULL, req.size, (uint32_t)b.type};
  if (vkAllocateMemory(dev, &mai, NULL, &b.mem) != VK_SUCCESS) {  /* e.g. a small BAR heap */
    vkDestroyBuffer(dev, b.buf, NULL); b.buf = VK_NULL_HANDLE; b.type = -1; return b;
  }
  CHECK(vkBindBufferMemory(dev, b.buf, b.mem, 0));
  CHECK(vkMapMemory(dev, b.mem, 0, VK_WHOLE_SIZE, 0, &b.map));
  return b;
}

static void drop(Buf *b) {
  if (b->buf == VK_NULL_HANDLE) return;
  vkUnmapMemory(dev, b->mem);
  vkDestroyBuffer(dev, b->buf, NULL);
  vkFreeMemory(dev, b->mem, NULL);
}

static VkShaderModule load(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) { fprintf(stderr, "cannot open %s\n", path); exit(1); }
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint32_t *code = malloc((size_t)n);
  if (fread(code, 1, (size_t)n, f) != (size_t)n) { fprintf(stderr, "short read %s\n", path); exit(1); }
  fclose(f);
  VkShaderModuleCreateInfo smi = {VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO, NULL, 0, (size_t)n, code};
  VkShaderModule m;
  CHECK(vkCreateShaderModule(dev, &smi, NULL, &m));
  free(code);
  return m;
}

int main(int argc, char **argv) {
  if (argc < 3) { fprintf(stderr, "usage: %s TINY.spv EMPTY.spv [device] [reps]\n", argv[0]); return 2; }
  uint32_t want = argc > 3 ? (uint32_t)atoi(argv[3]) : 0;
  int reps = argc > 4 ? atoi(argv[4]) : 2000;
  Probe pr = open_probe(want);
  dev = pr.device;
  VkQueue queue = pr.queue;
  VkPhysicalDeviceProperties props;
  vkGetPhysicalDeviceProperties(pr.pd, &props);
  vkGetPhysicalDeviceMemoryProperties(pr.pd, &mem);

  printf("{\"device\": \"%s\", \"memory_types\": [", props.deviceName);
  for (uint32_t i = 0; i < mem.memoryTypeCount; i++)
    printf("%s{\"heap\": %u, \"heap_mib\": %llu, \"flags\": %u}", i ? ", " : "", mem.memoryTypes[i].heapIndex,
           (unsigned long long)(mem.memoryHeaps[mem.memoryTypes[i].heapIndex].size >> 20),
           mem.memoryTypes[i].propertyFlags);
  printf("], ");

  VkDescriptorSetLayoutBinding binds[2] = {
    {0, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL},
    {1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1, VK_SHADER_STAGE_COMPUTE_BIT, NULL}};
  VkDescriptorSetLayoutCreateInfo dli = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO, NULL, 0, 2, binds};
  VkDescriptorSetLayout dsl;
  CHECK(vkCreateDescriptorSetLayout(dev, &dli, NULL, &dsl));
  VkPipelineLayoutCreateInfo pli = {VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO, NULL, 0, 1, &dsl, 0, NULL};
  VkPipelineLayout layout;
  CHECK(vkCreatePipelineLayout(dev, &pli, NULL, &layout));
  VkPipeline pipes[2];
  for (int p = 0; p < 2; p++) {
    VkComputePipelineCreateInfo cpi = {VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO, NULL, 0,
      {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO, NULL, 0, VK_SHADER_STAGE_COMPUTE_BIT,
       load(argv[1 + p]), "main", NULL}, layout, VK_NULL_HANDLE, -1};
    CHECK(vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &cpi, NULL, &pipes[p]));
  }
  VkDescriptorPoolSize ps = {VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 2};
  VkDescriptorPoolCreateInfo dpi = {VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO, NULL,
                                    VK_DESCRIPTOR_POOL_CREATE_FREE_DESCRIPTOR_SET_BIT, 1, 1, &ps};
  VkDescriptorPool dpool;
  CHECK(vkCreateDescriptorPool(dev, &dpi, NULL, &dpool));
  VkCommandBuffer cmd = pr.cmd;
  VkFence fence = pr.fence;
  VkSubmitInfo submit = {VK_STRUCTURE_TYPE_SUBMIT_INFO, NULL, 0, NULL, NULL, 1, &cmd, 0, NULL};
  double *t = malloc(sizeof(double) * (size_t)reps), *tsub = malloc(sizeof(double) * (size_t)reps),
         *treset = malloc(sizeof(double) * (size_t)reps), sub_first = -1, reset_first = -1;
  uint32_t src[N], dst[N];
  for (int i = 0; i < N; i++) src[i] = (uint32_t)(i * 2654435761u);

  /* variants: -2 empty command buffer, -1 empty shader, then (in kind, out kind) pairs */
  int pairs[][2] = {{-2, -2}, {-1, -1}, {0, 0}, {2, 1}, {1, 1}, {0, 1}, {2, 0}, {2, 2}};
  int npairs = (int)(sizeof(pairs) / sizeof(pairs[0]));
  printf("\"round_trip_us\": {");
  int first = 1;
  for (int v = 0; v < npairs; v++) {
    int ki = pairs[v][0], ko = pairs[v][1];
    Buf a = make(N * 4, ki < 0 ? 0 : ki), o = make(N * 4, ko < 0 ? 0 : ko);
    if (a.type < 0 || o.type < 0) { drop(&a); drop(&o); continue; }
    VkDescriptorSetAllocateInfo dai = {VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO, NULL, dpool, 1, &dsl};
    VkDescriptorSet set;
    CHECK(vkAllocateDescriptorSets(dev, &dai, &set));
    VkDescriptorBufferInfo dbi[2] = {{a.buf, 0, VK_WHOLE_SIZE}, {o.buf, 0, VK_WHOLE_SIZE}};
    VkWriteDescriptorSet w[2] = {
      {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 0, 0, 1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &dbi[0], NULL},
      {VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET, NULL, set, 1, 0, 1, VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, NULL, &dbi[1], NULL}};
    vkUpdateDescriptorSets(dev, 2, w, 0, NULL);
    CHECK(vkResetCommandBuffer(cmd, 0));
    VkCommandBufferBeginInfo begin = {VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO, NULL, 0, NULL};
    CHECK(vkBeginCommandBuffer(cmd, &begin));
    if (ki >= -1) {
      vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, pipes[ki == -1]);
      vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout, 0, 1, &set, 0, NULL);
      vkCmdDispatch(cmd, 1, 1, 1);
      VkMemoryBarrier mb = {VK_STRUCTURE_TYPE_MEMORY_BARRIER, NULL, VK_ACCESS_SHADER_WRITE_BIT, VK_ACCESS_HOST_READ_BIT};
      vkCmdPipelineBarrier(cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT, VK_PIPELINE_STAGE_HOST_BIT, 0, 1, &mb, 0, NULL, 0, NULL);
    }
    CHECK(vkEndCommandBuffer(cmd));
    int bad = 0;
    for (int r = -50; r < reps; r++) {
      double t0 = now_us();
      memcpy(a.map, src, sizeof src);
      double ts0 = now_us();
      CHECK(vkQueueSubmit(queue, 1, &submit, fence));
      double ts1 = now_us();
      while (vkGetFenceStatus(dev, fence) == VK_NOT_READY) { }
      memcpy(dst, o.map, sizeof dst);
      double t1 = now_us();
      CHECK(vkResetFences(dev, 1, &fence));  /* outside the round trip, as kp's next eval would do it */
      double t2 = now_us();
      if (ki >= 0) for (int i = 0; i < N; i++) bad |= dst[i] != src[i] + 1;
      memset(o.map, 0, N * 4);
      if (r >= 0) { t[r] = t1 - t0; tsub[r] = ts1 - ts0; treset[r] = t2 - t1; }
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    qsort(tsub, (size_t)reps, sizeof(double), cmp_double);
    qsort(treset, (size_t)reps, sizeof(double), cmp_double);
    if (ki == 0 && ko == 0) { sub_first = tsub[reps / 2]; reset_first = treset[reps / 2]; }
    char name[64];
    if (ki == -2) snprintf(name, sizeof name, "empty submission");
    else if (ki == -1) snprintf(name, sizeof name, "empty shader");
    else snprintf(name, sizeof name, "in %s (type %d), out %s (type %d)", KINDS[ki], a.type, KINDS[ko], o.type);
    printf("%s\"%s\": %.2f", first ? "" : ", ", name, bad ? -1.0 : t[reps / 2]);
    first = 0;
    CHECK(vkFreeDescriptorSets(dev, dpool, 1, &set));
    drop(&a);
    drop(&o);
  }
  printf("}, \"submit_call_us\": %.2f, \"reset_fence_call_us\": %.2f, \"read_4mib_gbps\": {",
         sub_first, reset_first);
  void *host = malloc(BIG);
  first = 1;
  for (int k = 0; k < 3; k++) {
    Buf b = make(BIG, k);
    if (b.type < 0) continue;
    memset(b.map, 1, BIG);
    double best = 1e30;
    for (int r = 0; r < 5; r++) {
      double t0 = now_us();
      memcpy(host, b.map, BIG);
      double dt = now_us() - t0;
      if (dt < best) best = dt;
    }
    printf("%s\"%s\": %.2f", first ? "" : ", ", KINDS[k], BIG / best / 1e3);
    first = 0;
    drop(&b);
  }
  printf("}}\n");
  free(host);
  free(t);
  free(tsub);
  free(treset);
  return 0;
}
