// SPDX-License-Identifier: GPL-2.0
// ndk::RegistrationCache on a fake kernel: hits, misses, containment and
// the flag rule, stale generations, LRU eviction and its bound, bypass,
// registrations without a slot, lease semantics, errors.
#include "ndk/registration_cache.hpp"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <thread>
#include <vector>

namespace {

const std::uint64_t kPage = static_cast<std::uint64_t>(sysconf(_SC_PAGESIZE));

// What the fake kernel knows; shared by the test and the backend.
struct FakeKernel {
    struct Reg {
        std::uint64_t address, length;
        std::uint32_t flags, slot;
    };
    std::vector<std::uint64_t> gens = std::vector<std::uint64_t>(8, 100);
    std::map<std::uint32_t, Reg> live;
    std::vector<std::uint32_t> deregistered;  // in order
    std::uint32_t next_handle = 1;
    int registers = 0;
    int deregisters = 0;
    mutable int generation_reads = 0;
    bool no_slots = false;
    std::vector<int> fail;          // errnos the next Register calls return
    std::set<std::uint32_t> bound;  // handles whose Deregister is EBUSY (a window)

    std::uint32_t FreeSlot() const {
        if (no_slots) return ndk::kCacheSlotNone;
        for (std::uint32_t s = 0; s < gens.size(); s++) {
            bool used = false;
            for (const auto& [h, r] : live) used |= r.slot == s;
            if (!used) return s;
        }
        return ndk::kCacheSlotNone;
    }
    // munmap: every registration overlapping [a, a + n) goes stale.
    void Unmap(std::uint64_t a, std::uint64_t n) {
        for (const auto& [h, r] : live)
            if (r.slot != ndk::kCacheSlotNone && r.address < a + n && a < r.address + r.length)
                gens[r.slot]++;
    }
};

class FakeBackend final : public ndk::CacheBackend {
  public:
    explicit FakeBackend(std::shared_ptr<FakeKernel> k) : k_(std::move(k)) {}
    ndk::Result<ndk::BackendRegistration> Register(std::uint64_t address, std::uint64_t length,
                                                   std::uint32_t flags) noexcept override {
        k_->registers++;
        if (!k_->fail.empty()) {
            int e = k_->fail.front();
            k_->fail.erase(k_->fail.begin());
            return ndk::Error::FromErrnoWsa(e);
        }
        std::uint32_t slot = k_->FreeSlot();
        std::uint32_t h = k_->next_handle++;
        k_->live[h] = {address, length, flags, slot};
        ndk::BackendRegistration r;
        r.handle = h;
        r.local_token = 0x1000 + h;
        r.remote_token = 0x2000 + h;
        r.base_address = address;
        r.cache_slot = slot;
        r.generation = slot == ndk::kCacheSlotNone ? 0 : k_->gens[slot];
        return r;
    }
    ndk::Result<void> Deregister(std::uint32_t handle) noexcept override {
        k_->deregisters++;
        auto it = k_->live.find(handle);
        if (it == k_->live.end()) return ndk::Error::FromErrnoWsa(ENOENT);
        if (k_->bound.count(handle)) return ndk::Error::ForDeregisterMemory(EBUSY);
        if (it->second.slot != ndk::kCacheSlotNone) k_->gens[it->second.slot]++;
        k_->live.erase(it);
        k_->deregistered.push_back(handle);
        return {};
    }
    std::uint64_t Generation(std::uint32_t slot) const noexcept override {
        k_->generation_reads++;
        return slot < k_->gens.size() ? k_->gens[slot] : ~0ull;
    }

  private:
    std::shared_ptr<FakeKernel> k_;
};

const void* At(std::uint64_t a) { return reinterpret_cast<const void*>(a); }

class RegistrationCacheTest : public ::testing::Test {
  protected:
    ndk::RegistrationCache Make(std::uint64_t bound = 64 * kPage) {
        return ndk::RegistrationCache::Create(std::make_unique<FakeBackend>(k),
                                              ndk::RegistrationCacheOptions{bound});
    }
    // A one-page registration at base + page * kPage, made and left
    // unused; its handle.
    std::uint32_t Unused(ndk::RegistrationCache& c, std::uint64_t page) {
        auto l = c.Acquire(At(base + page * kPage), kPage, ndk::kMemRead);
        EXPECT_TRUE(l.ok());
        return l.ok() ? l->handle() : 0;
    }
    std::shared_ptr<FakeKernel> k = std::make_shared<FakeKernel>();
    const std::uint64_t base = 0x10000000;
};

TEST_F(RegistrationCacheTest, SameRangeIsAHitWithoutASystemCall) {
    auto c = Make();
    auto a = c.Acquire(At(base), 2 * kPage, ndk::kMemRead);
    ASSERT_TRUE(a.ok());
    EXPECT_TRUE(a->cached());
    EXPECT_EQ(a->base_address(), base);
    EXPECT_EQ(a->length(), 2 * kPage);
    std::uint32_t h = a->handle();
    a->Release();
    EXPECT_EQ(k->deregisters, 0);  // stays cached while unused
    auto b = c.Acquire(At(base), 2 * kPage, ndk::kMemRead);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->handle(), h);
    EXPECT_EQ(b->local_token(), 0x1000 + h);
    // Two leases at once share the registration.
    auto b2 = c.Acquire(At(base), 2 * kPage, ndk::kMemRead);
    ASSERT_TRUE(b2.ok());
    EXPECT_EQ(b2->handle(), h);
    EXPECT_EQ(k->registers, 1);
    EXPECT_EQ(k->deregisters, 0);
    auto st = c.stats();
    EXPECT_EQ(st.hits, 2u);
    EXPECT_EQ(st.misses, 1u);
    EXPECT_EQ(st.entries, 1u);
    EXPECT_EQ(st.cached_bytes, 2 * kPage);
}

TEST_F(RegistrationCacheTest, ContainedRangeIsAHit) {
    auto c = Make();
    auto a = c.Acquire(At(base), 4 * kPage, ndk::kMemReadWrite);
    ASSERT_TRUE(a.ok());
    auto b = c.Acquire(At(base + kPage + 17), kPage, ndk::kMemRead);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(b->handle(), a->handle());
    EXPECT_EQ(b->base_address(), base);  // the registration's, not the buffer's
    EXPECT_EQ(b->length(), 4 * kPage);
    auto last = c.Acquire(At(base + 4 * kPage - 1), 1, ndk::kMemWrite);
    ASSERT_TRUE(last.ok());
    EXPECT_EQ(last->handle(), a->handle());
    EXPECT_EQ(k->registers, 1);
    EXPECT_EQ(c.stats().hits, 2u);
}

TEST_F(RegistrationCacheTest, OverlappingButNotContainedIsAMiss) {
    auto c = Make();
    auto a = c.Acquire(At(base), 4 * kPage, ndk::kMemRead);
    ASSERT_TRUE(a.ok());
    // (Each is contained in neither `a` nor the ones acquired before it.)
    auto over_end = c.Acquire(At(base + 4 * kPage - 1), 2, ndk::kMemRead);
    auto before = c.Acquire(At(base - 1), 2, ndk::kMemRead);
    auto past_end = c.Acquire(At(base + 2 * kPage), 4 * kPage, ndk::kMemRead);
    ASSERT_TRUE(past_end.ok() && before.ok() && over_end.ok());
    EXPECT_NE(past_end->handle(), a->handle());
    EXPECT_NE(before->handle(), a->handle());
    EXPECT_NE(over_end->handle(), a->handle());
    EXPECT_EQ(k->registers, 4);
    EXPECT_EQ(c.stats().misses, 4u);
    EXPECT_EQ(c.stats().hits, 0u);
}

TEST_F(RegistrationCacheTest, FlagsMustIncludeTheRequestedOnes) {
    auto c = Make();
    auto r = c.Acquire(At(base), kPage, ndk::kMemRead);
    ASSERT_TRUE(r.ok());
    auto w = c.Acquire(At(base), kPage, ndk::kMemWrite);  // READ lacks WRITE
    ASSERT_TRUE(w.ok());
    EXPECT_NE(w->handle(), r->handle());
    EXPECT_EQ(w->flags(), ndk::kMemWrite);
    auto rw = c.Acquire(At(base), kPage, ndk::kMemReadWrite);  // neither has both
    ASSERT_TRUE(rw.ok());
    EXPECT_NE(rw->handle(), r->handle());
    EXPECT_NE(rw->handle(), w->handle());
    EXPECT_EQ(k->registers, 3);
    // Every subset of READWRITE hits the READWRITE registration now (or
    // an exact one).
    for (std::uint32_t f : {ndk::kMemRead, ndk::kMemWrite, ndk::kMemReadWrite}) {
        auto h = c.Acquire(At(base), kPage, f);
        ASSERT_TRUE(h.ok());
        EXPECT_EQ(h->flags() & f, f);
    }
    EXPECT_EQ(k->registers, 3);
}

TEST_F(RegistrationCacheTest, StaleGenerationIsAMissAndTheOldEntryGoes) {
    auto c = Make();
    std::uint32_t old = 0;
    {
        auto a = c.Acquire(At(base), 2 * kPage, ndk::kMemRead);
        ASSERT_TRUE(a.ok());
        old = a->handle();
    }
    k->Unmap(base + kPage, 1);  // munmap of one byte's page of it
    auto b = c.Acquire(At(base), 2 * kPage, ndk::kMemRead);
    ASSERT_TRUE(b.ok());
    EXPECT_NE(b->handle(), old);
    EXPECT_EQ(b->generation(), k->gens[b->cache_slot()]);
    EXPECT_EQ(k->deregistered, std::vector<std::uint32_t>{old});
    auto st = c.stats();
    EXPECT_EQ(st.stale, 1u);
    EXPECT_EQ(st.misses, 2u);
    EXPECT_EQ(st.hits, 0u);
    EXPECT_EQ(st.entries, 1u);
    EXPECT_EQ(st.cached_bytes, 2 * kPage);
}

TEST_F(RegistrationCacheTest, StaleWhileLeasedGoesWithItsLastLease) {
    auto c = Make();
    auto a = c.Acquire(At(base), kPage, ndk::kMemRead);
    ASSERT_TRUE(a.ok());
    k->Unmap(base, kPage);
    auto b = c.Acquire(At(base), kPage, ndk::kMemRead);
    ASSERT_TRUE(b.ok());
    EXPECT_NE(b->handle(), a->handle());
    EXPECT_EQ(k->deregisters, 0);  // still in use
    std::uint32_t old = a->handle();
    a->Release();
    EXPECT_EQ(k->deregistered, std::vector<std::uint32_t>{old});
    EXPECT_EQ(c.stats().entries, 1u);
}

TEST_F(RegistrationCacheTest, StaleUnusedEntriesAreSweptOnAMiss) {
    auto c = Make();
    for (int i = 0; i < 3; i++) {
        auto a = c.Acquire(At(base + i * 2 * kPage), kPage, ndk::kMemRead);
        ASSERT_TRUE(a.ok());
    }
    k->Unmap(base, 6 * kPage);
    auto other = c.Acquire(At(base + 100 * kPage), kPage, ndk::kMemRead);
    ASSERT_TRUE(other.ok());
    EXPECT_EQ(k->deregisters, 3);
    EXPECT_EQ(c.stats().stale, 3u);
    EXPECT_EQ(c.stats().entries, 1u);
}

TEST_F(RegistrationCacheTest, AHitMakesNoSystemCall) {
    auto c = Make();
    { auto warm = c.Acquire(At(base), 8 * kPage, ndk::kMemReadWrite); }
    int regs = k->registers, deregs = k->deregisters;
    for (int i = 0; i < 1000; i++) {
        auto l = c.Acquire(At(base + (i % 8) * kPage), kPage, ndk::kMemRead);
        ASSERT_TRUE(l.ok());
    }
    EXPECT_EQ(k->registers, regs);
    EXPECT_EQ(k->deregisters, deregs);
    EXPECT_GE(k->generation_reads, 1000);  // each hit checked its generation
    EXPECT_EQ(c.stats().hits, 1000u);
}

TEST_F(RegistrationCacheTest, EvictionIsLeastRecentlyUsedFirstWithinTheBound) {
    auto c = Make(3 * kPage);
    std::uint32_t h[4];
    for (int i = 0; i < 3; i++) {
        auto l = c.Acquire(At(base + i * 16 * kPage), kPage, ndk::kMemRead);
        ASSERT_TRUE(l.ok());
        h[i] = l->handle();
    }
    EXPECT_EQ(c.stats().cached_bytes, 3 * kPage);
    // Use the first again: the second is now the least recently used.
    { auto again = c.Acquire(At(base), kPage, ndk::kMemRead); }
    auto d = c.Acquire(At(base + 64 * kPage), kPage, ndk::kMemRead);
    ASSERT_TRUE(d.ok());
    h[3] = d->handle();
    EXPECT_EQ(k->deregistered, std::vector<std::uint32_t>{h[1]});
    EXPECT_EQ(c.stats().evictions, 1u);
    EXPECT_LE(c.stats().cached_bytes, 3 * kPage);
    // Two pages more: the third, then the first go.
    auto big = c.Acquire(At(base + 128 * kPage), 2 * kPage, ndk::kMemRead);
    ASSERT_TRUE(big.ok());
    EXPECT_EQ(k->deregistered, (std::vector<std::uint32_t>{h[1], h[2], h[0]}));
    EXPECT_EQ(c.stats().cached_bytes, 3 * kPage);
    // Entries in use are never evicted: the bound is exceeded while they live.
    auto more = c.Acquire(At(base + 256 * kPage), kPage, ndk::kMemRead);
    ASSERT_TRUE(more.ok());
    EXPECT_EQ(c.stats().cached_bytes, 4 * kPage);
    EXPECT_EQ(k->live.count(h[3]), 1u);
    d->Release();  // now unused and over the bound: it goes
    EXPECT_EQ(k->live.count(h[3]), 0u);
    EXPECT_LE(c.stats().cached_bytes, 3 * kPage);
}

TEST_F(RegistrationCacheTest, LargerThanTheBoundIsNotCached) {
    auto c = Make(2 * kPage);
    auto l = c.Acquire(At(base), 3 * kPage, ndk::kMemRead);
    ASSERT_TRUE(l.ok());
    EXPECT_FALSE(l->cached());
    EXPECT_EQ(c.stats().uncached, 1u);
    l->Release();
    EXPECT_EQ(k->deregisters, 1);
    EXPECT_EQ(c.stats().cached_bytes, 0u);
}

TEST_F(RegistrationCacheTest, BypassRegistersAndDeregistersDirectly) {
    auto c = Make();
    auto cached = c.Acquire(At(base), 4 * kPage, ndk::kMemRead);
    ASSERT_TRUE(cached.ok());
    auto by = c.Acquire(At(base), kPage, ndk::kMemRead, ndk::CacheMode::kBypass);
    ASSERT_TRUE(by.ok());
    EXPECT_FALSE(by->cached());
    EXPECT_NE(by->handle(), cached->handle());  // no lookup
    EXPECT_EQ(k->registers, 2);
    std::uint32_t h = by->handle();
    by->Release();
    EXPECT_EQ(k->deregistered, std::vector<std::uint32_t>{h});
    // A bypass registration is never found later.
    auto again = c.Acquire(At(base + 8 * kPage), kPage, ndk::kMemRead, ndk::CacheMode::kBypass);
    ASSERT_TRUE(again.ok());
    again->Release();
    auto cached2 = c.Acquire(At(base + 8 * kPage), kPage, ndk::kMemRead);
    ASSERT_TRUE(cached2.ok());
    EXPECT_EQ(k->registers, 4);
    auto st = c.stats();
    EXPECT_EQ(st.uncached, 2u);
    EXPECT_EQ(st.hits, 0u);
    EXPECT_EQ(st.entries, 2u);
}

TEST_F(RegistrationCacheTest, RegistrationsWithoutASlotAreNotCached) {
    k->no_slots = true;
    auto c = Make();
    auto a = c.Acquire(At(base), kPage, ndk::kMemRead);
    ASSERT_TRUE(a.ok());
    EXPECT_EQ(a->cache_slot(), ndk::kCacheSlotNone);
    EXPECT_FALSE(a->cached());
    a->Release();
    EXPECT_EQ(k->deregisters, 1);
    auto b = c.Acquire(At(base), kPage, ndk::kMemRead);
    ASSERT_TRUE(b.ok());
    EXPECT_EQ(k->registers, 2);
    EXPECT_EQ(c.stats().uncached, 2u);
    EXPECT_EQ(c.stats().entries, 0u);
}

TEST_F(RegistrationCacheTest, LeasesMoveAndReleaseOnce) {
    auto c = ndk::RegistrationCache::Create(std::make_unique<FakeBackend>(k));
    auto a = c.Acquire(At(base), kPage, ndk::kMemRead, ndk::CacheMode::kBypass);
    ASSERT_TRUE(a.ok());
    ndk::RegistrationLease l1 = std::move(*a);
    EXPECT_TRUE(a->empty());
    EXPECT_FALSE(l1.empty());
    std::uint32_t h = l1.handle();
    ndk::RegistrationLease l2;
    EXPECT_TRUE(l2.empty());
    l2 = std::move(l1);
    EXPECT_TRUE(l1.empty());
    EXPECT_EQ(l2.handle(), h);
    l1.Release();  // empty: nothing
    EXPECT_EQ(k->deregisters, 0);
    // Assigning over a live lease releases it.
    auto b = c.Acquire(At(base + kPage), kPage, ndk::kMemRead, ndk::CacheMode::kBypass);
    ASSERT_TRUE(b.ok());
    l2 = std::move(*b);
    EXPECT_EQ(k->deregistered, std::vector<std::uint32_t>{h});
    l2.Release();
    l2.Release();
    EXPECT_EQ(k->deregisters, 2);
    // Empty leases name nothing: no handle or token of a region gone.
    EXPECT_EQ(l2.handle(), 0u);
    EXPECT_EQ(l2.local_token(), 0u);
    EXPECT_EQ(l1.handle(), 0u);
}

TEST_F(RegistrationCacheTest, LeasesOutliveTheCache) {
    ndk::RegistrationLease l;
    {
        auto c = Make();
        auto a = c.Acquire(At(base), kPage, ndk::kMemRead);
        ASSERT_TRUE(a.ok());
        l = std::move(*a);
        { auto unused = c.Acquire(At(base + 8 * kPage), kPage, ndk::kMemRead); }
        EXPECT_EQ(k->deregisters, 0);
    }
    EXPECT_EQ(k->deregisters, 1);  // the unused one went with the cache
    EXPECT_EQ(k->live.count(l.handle()), 1u);
    l.Release();
    EXPECT_TRUE(k->live.empty());
}

TEST_F(RegistrationCacheTest, FlushDeregistersUnusedEntries) {
    auto c = Make();
    auto used = c.Acquire(At(base), kPage, ndk::kMemRead);
    { auto unused = c.Acquire(At(base + 8 * kPage), kPage, ndk::kMemRead); }
    c.Flush();
    EXPECT_EQ(k->deregisters, 1);
    EXPECT_EQ(c.stats().entries, 1u);
    auto hit = c.Acquire(At(base), kPage, ndk::kMemRead);
    ASSERT_TRUE(hit.ok());
    EXPECT_EQ(c.stats().hits, 1u);
}

TEST_F(RegistrationCacheTest, BusyDeregistrationIsKeptAndTriedAgain) {
    auto c = Make(2 * kPage);
    std::uint32_t h = Unused(c, 0);
    k->bound.insert(h);  // a window bound over it after its lease went
    c.Flush();
    EXPECT_EQ(k->deregisters, 1);
    EXPECT_EQ(k->live.count(h), 1u);
    EXPECT_EQ(c.stats().busy, 1u);
    EXPECT_EQ(c.stats().entries, 0u);
    // Not findable: a hit is impossible, and a miss tries it again.
    auto again = c.Acquire(At(base + 4 * kPage), kPage, ndk::kMemRead);
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(c.stats().hits, 0u);
    EXPECT_EQ(k->deregisters, 2);
    EXPECT_EQ(c.stats().busy, 1u);
    k->bound.clear();  // the window went
    c.Flush();
    EXPECT_EQ(k->live.count(h), 0u);
    EXPECT_EQ(c.stats().busy, 0u);
    EXPECT_EQ(k->live.count(again->handle()), 1u);  // in use: kept
}

TEST_F(RegistrationCacheTest, AMissTriesOneRefusedDeregistrationOldestFirst) {
    auto c = Make(kPage);
    std::vector<std::uint32_t> refused;
    for (int i = 0; i < 3; i++) {
        auto l = c.Acquire(At(base + 4 * i * kPage), kPage, ndk::kMemRead);
        ASSERT_TRUE(l.ok());
        refused.push_back(l->handle());
        k->bound.insert(l->handle());
    }
    c.Flush();
    ASSERT_EQ(c.stats().busy, 3u);
    const int before = k->deregisters;
    k->bound.erase(refused[1]);
    auto miss = [&](int i) {
        return c.Acquire(At(base + (64 + 4 * i) * kPage), kPage, ndk::kMemRead,
                         ndk::CacheMode::kBypass);
    };
    // Each miss one system call for them: the oldest, then the next.
    { auto l = miss(0); }
    EXPECT_EQ(k->deregisters - before, 1 + 1);  // its retry and the bypass lease
    EXPECT_EQ(c.stats().busy, 3u);
    { auto l = miss(1); }
    EXPECT_EQ(c.stats().busy, 2u);
    EXPECT_EQ(k->live.count(refused[1]), 0u);
}

TEST_F(RegistrationCacheTest, AfterTheCacheEndsALeaseReleaseTriesTheRefusedOnes) {
    auto c = Make();
    std::uint32_t h = Unused(c, 0);
    k->bound.insert(h);
    auto live = c.Acquire(At(base + 8 * kPage), kPage, ndk::kMemRead);
    ASSERT_TRUE(live.ok());
    { ndk::RegistrationCache gone = std::move(c); }
    EXPECT_EQ(k->live.count(h), 1u);  // refused at the end
    k->bound.clear();
    live->Release();
    EXPECT_TRUE(k->live.empty());
}

TEST_F(RegistrationCacheTest, BusyEntriesFromEvictionAndUncachedLeases) {
    auto c = Make(kPage);
    std::uint32_t evicted = Unused(c, 0);
    k->bound.insert(evicted);
    // The bound holds one page: this miss evicts the first, refused.
    auto l = c.Acquire(At(base + 4 * kPage), kPage, ndk::kMemRead);
    ASSERT_TRUE(l.ok());
    EXPECT_EQ(c.stats().evictions, 1u);
    EXPECT_EQ(c.stats().busy, 1u);
    auto by = c.Acquire(At(base + 8 * kPage), kPage, ndk::kMemRead, ndk::CacheMode::kBypass);
    ASSERT_TRUE(by.ok());
    std::uint32_t bypassed = by->handle();
    k->bound.insert(bypassed);
    by->Release();
    EXPECT_EQ(c.stats().busy, 2u);
    EXPECT_EQ(k->live.size(), 3u);
    // The cache's end tries them once more: what is free then goes.
    k->bound.erase(evicted);
    l->Release();
    { ndk::RegistrationCache gone = std::move(c); }
    EXPECT_EQ(k->live.count(evicted), 0u);
    EXPECT_EQ(k->live.count(bypassed), 1u);  // the kernel keeps it until the file closes
    EXPECT_EQ(k->live.size(), 1u);
}

TEST_F(RegistrationCacheTest, ErrorsAreValuesWithWsaCodes) {
    auto c = Make();
    auto e = c.Acquire(At(base), 0, ndk::kMemRead);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().errnum, EINVAL);
    EXPECT_EQ(e.error().wsa, ndk::wsa::kEinval);
    e = c.Acquire(At(base), kPage, 0);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().errnum, EINVAL);
    e = c.Acquire(At(base), kPage, 4);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().errnum, EINVAL);
    e = c.Acquire(At(~0ull - 10), 100, ndk::kMemRead);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().errnum, EFAULT);
    EXPECT_EQ(e.error().wsa, ndk::wsa::kEfault);
    k->fail = {EFAULT};
    e = c.Acquire(At(base), kPage, ndk::kMemRead);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().wsa, ndk::wsa::kEfault);
    EXPECT_EQ(k->registers, 1);
    EXPECT_EQ(c.stats().entries, 0u);
    ndk::RegistrationCache moved = std::move(c);
    e = c.Acquire(At(base), kPage, ndk::kMemRead);  // NOLINT: use after move on purpose
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().errnum, EBADF);
}

TEST_F(RegistrationCacheTest, MemlockFailureRetriesAfterDroppingUnusedEntries) {
    auto c = Make();
    { auto unused = c.Acquire(At(base), kPage, ndk::kMemRead); }
    k->fail = {ENOMEM};
    auto l = c.Acquire(At(base + 8 * kPage), kPage, ndk::kMemRead);
    ASSERT_TRUE(l.ok());
    EXPECT_EQ(k->registers, 3);
    EXPECT_EQ(k->deregisters, 1);
    // Without anything to drop the error stands.
    k->fail = {ENOMEM};
    auto e = c.Acquire(At(base + 16 * kPage), kPage, ndk::kMemRead);
    ASSERT_FALSE(e.ok());
    EXPECT_EQ(e.error().errnum, ENOMEM);
    EXPECT_EQ(e.error().wsa, ndk::wsa::kEnobufs);
}

TEST_F(RegistrationCacheTest, DefaultBoundIsHalfTheMemlockLimitAtMost64MiB) {
    rlimit saved{};
    ASSERT_EQ(getrlimit(RLIMIT_MEMLOCK, &saved), 0);
    rlimit low = saved;
    low.rlim_cur = 8 << 20;
    if (saved.rlim_max != RLIM_INFINITY && saved.rlim_max < low.rlim_cur)
        low.rlim_cur = saved.rlim_max;
    ASSERT_EQ(setrlimit(RLIMIT_MEMLOCK, &low), 0);
    EXPECT_EQ(Make(0).max_cached_bytes(), low.rlim_cur / 2);
    ASSERT_EQ(setrlimit(RLIMIT_MEMLOCK, &saved), 0);
    std::uint64_t want = saved.rlim_cur == RLIM_INFINITY
                             ? 64ull << 20
                             : std::min<std::uint64_t>(64ull << 20, saved.rlim_cur / 2);
    EXPECT_EQ(Make(0).max_cached_bytes(), want);
    EXPECT_EQ(Make(12345).max_cached_bytes(), 12345u);
}

TEST_F(RegistrationCacheTest, ThreadsShareOneCache) {
    auto c = Make(8 * kPage);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++)
        threads.emplace_back([&c, t, this] {
            for (int i = 0; i < 5000; i++) {
                auto l = c.Acquire(At(base + ((i + t) % 16) * kPage), kPage, ndk::kMemRead);
                ASSERT_TRUE(l.ok());
                if (i % 1000 == 999) l->Release();
            }
        });
    for (auto& th : threads) th.join();
    auto st = c.stats();
    EXPECT_EQ(st.hits + st.misses, 20000u);
    EXPECT_LE(st.cached_bytes, 8 * kPage);
    EXPECT_EQ(static_cast<std::uint64_t>(k->registers), st.misses);
    EXPECT_EQ(k->live.size(), st.entries);
}

}  // namespace
