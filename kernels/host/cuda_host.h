// cuda_host.h: just enough of CUDA's device-side language to compile kernels/*.cu as plain C++20 on
// a CPU and run their device functions and kernels.
//
// Used by table_decoders.cpp (tools/kernel-host-test.sh) and launch.cpp (the ibp-gpu feature
// `host-kernels`). Every GPU thread of a block is a fiber (ucontext) on the calling OS thread. Warp
// collectives (__shfl*_sync, votes, __syncwarp) wait for every live thread of the warp, __syncthreads
// for every live thread of the block; a thread that returns leaves both (as an exited thread does on
// the GPU). Code must reach every collective in every lane of a warp, as on the GPU with a full mask:
// a collective some threads never reach is reported as a deadlock. Blocks run one after another;
// `__shared__` variables are statics and the dynamic shared memory one buffer, so launches must not
// overlap (launch.cpp serialises them). This checks arithmetic, lane and block logic, not speed or
// the memory model.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>
#include <vector>

#define __device__
#define __global__
#define __forceinline__ inline
#define __shared__ static
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
// Byte s & 7 of {a, b} (bytes 0-3 of a, 4-7 of b) in each byte of the result, nibble by nibble of s.
inline unsigned __byte_perm(unsigned a, unsigned b, unsigned s) {
    const unsigned long long v = ((unsigned long long)b << 32) | a;
    unsigned r = 0;
    for (unsigned k = 0; k < 4; k++) r |= (unsigned)((v >> (8 * ((s >> (4 * k)) & 7u))) & 0xffu) << (8 * k);
    return r;
}
template <class T>
inline T __ldg(const T* p) { return *p; }
inline unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
inline unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }

// (Every thread of a launch is a fiber of one OS thread: a plain read-modify-write is atomic here.)
inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) {
    const unsigned long long old = *p;
    if (v > old) *p = v;
    return old;
}

[[noreturn]] inline void host_unsupported(const char* what) {
    std::fprintf(stderr, "cuda_host.h: %s is not emulated\n", what);
    std::abort();
}

// ---- GPU threads as fibers -----------------------------------------------------------------------
//
// Every GPU thread of a block is a fiber (ucontext, its own stack) run by one OS thread. A fiber runs
// until it reaches a collective, where it waits until every live thread of the collective's scope
// (its warp, or the block) has arrived; the last to arrive computes each waiter's result, and the
// scheduler resumes them in turn. Fibers that return leave their scopes. A pass in which no fiber can
// move is a deadlock (a collective some lanes never reach): reported, then abort().

struct HostScope {               // a warp or a block
    unsigned live = 0;           // threads not yet returned
    unsigned arrived = 0;        // threads waiting at the current collective
    unsigned long long gen = 0;  // collectives completed
    unsigned long long slot[1024] = {};
    unsigned src[1024] = {};
    unsigned long long result[1024] = {};
    int kind = 0;                // the current collective: 0 exchange, 1 ballot, 2 barrier, 3 and-reduce, 4 sum
};

struct HostFiber {
    ucontext_t ctx;
    bool done = false;
    unsigned long long waiting_gen = 0;
    HostScope* waiting = nullptr;  // scope whose collective this fiber waits for
};

struct HostGrid {
    // (Zeroed: AddressSanitizer's swapcontext clears the shadow of the target context's uc_stack,
    // which must say "no stack of its own" (size 0) here, not hold whatever the stack held before.)
    ucontext_t scheduler{};
    std::vector<HostFiber> fibers;
    std::vector<HostScope> warps;
    HostScope block;
    unsigned current = 0;
    const std::function<void()>* kernel = nullptr;
};
inline HostGrid* host_grid = nullptr;

// Member of thread t in its scope: its lane in a warp, its index in the block.
inline unsigned host_member(const HostScope& s, unsigned t) { return &s == &host_grid->block ? t : t & 31u; }

// Completes the scope's collective once every live member has arrived: computes each member's result.
inline void host_try_release(HostScope& s) {
    if (s.arrived == 0 || s.arrived < s.live) return;
    const unsigned n = &s == &host_grid->block ? (unsigned)host_grid->fibers.size() : 32u;
    if (s.kind == 0) {
        for (unsigned i = 0; i < n; i++) s.result[i] = s.slot[s.src[i] & (n - 1)];
    } else if (s.kind == 4) {
        unsigned sum = 0;
        for (unsigned i = 0; i < n; i++)
            if (s.src[i]) sum += (unsigned)s.slot[i];
        for (unsigned i = 0; i < n; i++) s.result[i] = sum;
    } else if (s.kind == 1 || s.kind == 3) {
        unsigned long long bits = 0;
        bool all = true;
        // (Exited members count as 0 in a ballot and are skipped by the and-reduction.)
        for (unsigned i = 0; i < n; i++)
            if (s.src[i]) {
                bits |= (unsigned long long)(s.slot[i] != 0) << (i & 63);
                all = all && s.slot[i] != 0;
            }
        for (unsigned i = 0; i < n; i++) s.result[i] = s.kind == 1 ? bits : all;
    }
    s.arrived = 0;
    s.gen++;
}

// This fiber arrives at scope s's collective of the given kind with value v (and source src for an
// exchange); returns its result once the collective completes.
inline unsigned long long host_collective(HostScope& s, int kind, unsigned long long v, unsigned src) {
    HostGrid& g = *host_grid;
    const unsigned t = g.current, m = host_member(s, t);
    if (s.arrived == 0) {
        s.kind = kind;
        if (kind == 1 || kind == 3 || kind == 4) {  // members that arrive mark themselves
            const unsigned n = &s == &g.block ? (unsigned)g.fibers.size() : 32u;
            for (unsigned i = 0; i < n; i++) s.src[i] = 0;
        }
    } else if (s.kind != kind) {
        std::fprintf(stderr, "cuda_host.h: threads of one scope at different collectives\n");
        std::abort();
    }
    s.slot[m] = v;
    s.src[m] = (kind == 1 || kind == 3 || kind == 4) ? 1u : src;
    s.arrived++;
    HostFiber& f = g.fibers[t];
    f.waiting = &s;
    f.waiting_gen = s.gen;
    host_try_release(s);
    while (s.gen == f.waiting_gen) swapcontext(&f.ctx, &g.scheduler);
    f.waiting = nullptr;
    return s.result[m];
}

inline HostScope& host_warp_scope() { return host_grid->warps[host_grid->current / 32]; }

template <class T>
inline T __shfl_sync(unsigned, T v, unsigned src) {
    return (T)host_collective(host_warp_scope(), 0, (unsigned long long)v, src & 31u);
}
template <class T>
inline T __shfl_up_sync(unsigned, T v, unsigned d) {
    const unsigned lane = threadIdx.x & 31u;
    return (T)host_collective(host_warp_scope(), 0, (unsigned long long)v, lane >= d ? lane - d : lane);
}
template <class T>
inline T __shfl_xor_sync(unsigned, T v, unsigned m) {
    return (T)host_collective(host_warp_scope(), 0, (unsigned long long)v, (threadIdx.x & 31u) ^ (m & 31u));
}
inline unsigned __ballot_sync(unsigned, int p) { return (unsigned)host_collective(host_warp_scope(), 1, p != 0, 0); }
inline int __any_sync(unsigned m, int p) { return __ballot_sync(m, p) != 0; }
inline int __all_sync(unsigned, int p) { return host_collective(host_warp_scope(), 3, p != 0, 0) != 0; }
inline unsigned __reduce_add_sync(unsigned, unsigned v) { return (unsigned)host_collective(host_warp_scope(), 4, v, 0); }
inline void __syncwarp(unsigned = 0xffffffffu) { host_collective(host_warp_scope(), 2, 0, 0); }
inline void __syncthreads() { host_collective(host_grid->block, 2, 0, 0); }
inline int __syncthreads_and(int p) { return host_collective(host_grid->block, 3, p != 0, 0) != 0; }

inline void host_fiber_main() {
    HostGrid& g = *host_grid;
    (*g.kernel)();
    const unsigned t = g.current;
    g.fibers[t].done = true;
    HostScope& w = g.warps[t / 32];
    w.live--;
    g.block.live--;
    host_try_release(w);
    host_try_release(g.block);
    swapcontext(&g.fibers[t].ctx, &g.scheduler);  // never resumed
}

// The dynamic shared memory of the running block (IBP_DYNAMIC_SMEM), zeroed per block.
inline std::vector<unsigned char>& host_dynamic_smem() {
    static std::vector<unsigned char> buf;
    return buf;
}
#define IBP_DYNAMIC_SMEM(name) ibp_u8* const name = host_dynamic_smem().data()

// ---- Fiber stacks --------------------------------------------------------------------------------
//
// A stack per thread of the largest block launched so far, kept for the next launches. Each is a
// mapping of its own with a guard page (PROT_NONE) at its low end: a fiber that overflows its stack
// faults there at once (SIGSEGV; AddressSanitizer reports it) instead of writing over other memory.
//
// Size: host_stack_default_kib KiB, or IBP_HOST_STACK_KIB (whole pages). IBP_HOST_STACK_REPORT=1
// paints each stack when made and prints at exit (stderr) the most any fiber of the process used:
// the bytes from the top of its stack down to the lowest byte no longer as painted.
//
// Measured that way (g++ 12, x86-64; every test of crates/ibp-gpu/tests/host_kernels.rs in a process
// of its own, as tools/host-kernels-test.sh runs them; tools/kernel-host-test.sh), the most in bytes:
//   host kernels (launch.cpp, -O2)                                    1 384
//   host kernels with AddressSanitizer                                2 496
//   the same, through AddressSanitizer's reports of a heap and a     26 984
//     stack overflow put into warp_copy (-fsanitize-recover)
//   row decoders (table_decoders.cpp, -O1; with AddressSanitizer)       680; 1 296
// 64 KiB is 2.4 times the most of them (26 times a kernel's own use). With 256 KiB, as before, the
// sanitized tests took 2.2 times as long: AddressSanitizer's swapcontext clears the shadow of the
// whole stack it switches to, twice per switch.
inline constexpr size_t host_stack_default_kib = 64;

struct HostStacks {
    static constexpr unsigned char paint = 0xa5;
    size_t page = 0, bytes = 0;            // page size; usable bytes of each stack (whole pages)
    bool report = false;                   // IBP_HOST_STACK_REPORT
    std::vector<unsigned char*> low;       // each stack's usable low end (its guard page just below)

    HostStacks() {
        page = (size_t)sysconf(_SC_PAGESIZE);
        size_t kib = host_stack_default_kib;
        if (const char* e = std::getenv("IBP_HOST_STACK_KIB"); e && *e) {
            char* end = nullptr;
            const unsigned long v = std::strtoul(e, &end, 10);
            if (*end || v == 0) {
                std::fprintf(stderr, "cuda_host.h: IBP_HOST_STACK_KIB=%s is not a number of KiB\n", e);
                std::abort();
            }
            kib = v;
        }
        bytes = (kib * 1024 + page - 1) / page * page;
        const char* r = std::getenv("IBP_HOST_STACK_REPORT");
        report = r && *r && std::strcmp(r, "0") != 0;
    }
    HostStacks(const HostStacks&) = delete;
    HostStacks& operator=(const HostStacks&) = delete;

    void reserve(size_t n) {
        while (low.size() < n) {
            void* m = mmap(nullptr, page + bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
            if (m == MAP_FAILED || mprotect(m, page, PROT_NONE) != 0) {
                std::perror("cuda_host.h: fiber stack (mmap, mprotect)");
                std::abort();
            }
            unsigned char* p = static_cast<unsigned char*>(m) + page;
            if (report) std::memset(p, paint, bytes);
            low.push_back(p);
        }
    }
    // The most bytes any of the stacks has used (painted stacks only).
    size_t high_water() const {
        size_t most = 0;
        for (const unsigned char* p : low) {
            size_t i = 0;
            while (i < bytes && p[i] == paint) i++;
            if (bytes - i > most) most = bytes - i;
        }
        return most;
    }
    ~HostStacks() {  // (the stacks stay mapped until the process ends)
        if (report && !low.empty())
            std::fprintf(stderr, "cuda_host.h: fiber stack high-water %zu bytes of %zu (%zu stacks)\n", high_water(),
                         bytes, low.size());
    }
};
inline HostStacks& host_stacks() {
    static HostStacks s;
    return s;
}

// Runs kernel() as a grid of `blocks` blocks of `threads` threads (a multiple of 32, at most 1024)
// with `smem` bytes of dynamic shared memory, one block after another.
inline void run_grid(unsigned blocks, unsigned threads, size_t smem, const std::function<void()>& kernel) {
    HostStacks& stacks = host_stacks();
    stacks.reserve(threads);
    host_dynamic_smem().assign(smem + 16, 0);
    for (unsigned b = 0; b < blocks; b++) {
        HostGrid g;
        g.kernel = &kernel;
        g.fibers.resize(threads);
        g.warps.resize(threads / 32);
        for (auto& w : g.warps) w.live = 32;
        g.block.live = threads;
        host_grid = &g;
        for (unsigned t = 0; t < threads; t++) {
            HostFiber& f = g.fibers[t];
            getcontext(&f.ctx);
            f.ctx.uc_stack.ss_sp = stacks.low[t];
            f.ctx.uc_stack.ss_size = stacks.bytes;
            f.ctx.uc_link = nullptr;
            makecontext(&f.ctx, host_fiber_main, 0);
        }
        blockIdx = host_dim3{b, 0, 0};
        blockDim = host_dim3{threads, 1, 1};
        gridDim = host_dim3{blocks, 1, 1};
        for (;;) {
            bool all_done = true, moved = false;
            for (unsigned t = 0; t < threads; t++) {
                HostFiber& f = g.fibers[t];
                if (f.done) continue;
                all_done = false;
                if (f.waiting && f.waiting->gen == f.waiting_gen) continue;  // still waiting
                g.current = t;
                threadIdx = host_dim3{t, 0, 0};
                swapcontext(&g.scheduler, &f.ctx);
                moved = true;
            }
            if (all_done) break;
            if (!moved) {
                std::fprintf(stderr, "cuda_host.h: deadlock in block %u: threads wait at collectives others never reach\n", b);
                std::abort();
            }
        }
        host_grid = nullptr;
    }
}

// Runs body(lane) as one warp of 32 threads (threadIdx.x = lane).
inline void run_warp(const std::function<void(unsigned)>& body) {
    run_grid(1, 32, 0, [&] { body(threadIdx.x); });
}
