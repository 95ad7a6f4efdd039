// cuda_host.h: just enough of CUDA's device-side language to compile kernels/*.cu as plain C++17 on
// a CPU and call their warp-level device functions, with one std::thread per lane.
//
// Used by table_decoders.cpp (tools/kernel-host-test.sh). Warp collectives (__shfl*_sync, votes,
// __syncwarp) meet at a barrier of the calling warp's 32 threads, so a function that calls them must
// be entered by all 32 lanes (run_warp) and must reach every collective in every lane, as on the GPU
// with a full mask. Block-wide barriers and kernels are not emulated: they abort if called.
// This checks the arithmetic and the lane logic of device code, not its speed or its memory model.
#pragma once

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))

struct uint4 {
    unsigned x, y, z, w;
};
inline uint4 make_uint4(unsigned x, unsigned y, unsigned z, unsigned w) { return uint4{x, y, z, w}; }
struct host_dim3 {
    unsigned x = 0, y = 0, z = 0;
};
inline thread_local host_dim3 threadIdx, blockIdx, blockDim{32, 1, 1}, gridDim{1, 1, 1};

inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __popcll(unsigned long long x) { return __builtin_popcountll(x); }
inline int __ffs(int x) { return __builtin_ffs(x); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz((unsigned)x); }
inline unsigned __funnelshift_r(unsigned lo, unsigned hi, unsigned shift) {
    return (unsigned)((((unsigned long long)hi << 32) | lo) >> (shift & 31u));
}
inline unsigned __funnelshift_l(unsigned lo, unsigned hi, unsigned shift) {
    return (unsigned)(((((unsigned long long)hi << 32) | lo) << (shift & 31u)) >> 32);
}
template <class T>
inline T __ldg(const T* p) { return *p; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }

inline std::mutex& host_atomic_lock() {
    static std::mutex m;
    return m;
}
inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) {
    std::lock_guard<std::mutex> g(host_atomic_lock());
    const unsigned long long old = *p;
    if (v > old) *p = v;
    return old;
}

[[noreturn]] inline void host_unsupported(const char* what) {
    std::fprintf(stderr, "cuda_host.h: %s is not emulated\n", what);
    std::abort();
}
inline void __syncthreads() { host_unsupported("__syncthreads"); }
inline int __syncthreads_and(int) { host_unsupported("__syncthreads_and"); }

// ---- one warp: 32 threads meeting at a barrier for each collective ---------------------------------

struct HostWarp {
    std::barrier<> meet{32};
    unsigned long long slot[32] = {};
};
inline thread_local HostWarp* host_warp = nullptr;

// Every lane publishes v; returns what lane `from(lane)` published.
template <class F>
inline unsigned long long host_exchange(unsigned long long v, F from) {
    HostWarp& w = *host_warp;
    const unsigned lane = threadIdx.x & 31u;
    w.slot[lane] = v;
    w.meet.arrive_and_wait();
    const unsigned long long r = w.slot[from(lane) & 31u];
    w.meet.arrive_and_wait();
    return r;
}
template <class T>
inline T __shfl_sync(unsigned, T v, unsigned src) {
    return (T)host_exchange((unsigned long long)v, [&](unsigned) { return src; });
}
template <class T>
inline T __shfl_up_sync(unsigned, T v, unsigned d) {
    return (T)host_exchange((unsigned long long)v, [&](unsigned lane) { return lane >= d ? lane - d : lane; });
}
template <class T>
inline T __shfl_xor_sync(unsigned, T v, unsigned m) {
    return (T)host_exchange((unsigned long long)v, [&](unsigned lane) { return lane ^ m; });
}
inline unsigned __ballot_sync(unsigned, int p) {
    HostWarp& w = *host_warp;
    const unsigned lane = threadIdx.x & 31u;
    w.slot[lane] = p != 0;
    w.meet.arrive_and_wait();
    unsigned bits = 0;
    for (unsigned i = 0; i < 32; i++) bits |= (unsigned)(w.slot[i] != 0) << i;
    w.meet.arrive_and_wait();
    return bits;
}
inline int __any_sync(unsigned m, int p) { return __ballot_sync(m, p) != 0; }
inline int __all_sync(unsigned m, int p) { return __ballot_sync(m, p) == 0xffffffffu; }
inline void __syncwarp(unsigned = 0xffffffffu) { host_warp->meet.arrive_and_wait(); }

// Runs body(lane) in 32 threads forming one warp (threadIdx.x = lane).
inline void run_warp(const std::function<void(unsigned)>& body) {
    HostWarp warp;
    std::vector<std::thread> lanes;
    for (unsigned lane = 0; lane < 32; lane++)
        lanes.emplace_back([&, lane] {
            host_warp = &warp;
            threadIdx.x = lane;
            body(lane);
        });
    for (auto& t : lanes) t.join();
}
