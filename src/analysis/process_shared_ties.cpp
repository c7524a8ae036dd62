#include "analysis/process_shared_ties.h"

#include <set>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "analysis/lock_kinds.h"

namespace lockscope {
namespace {

// The profiled process each process descends from, as far as the profile knows (fork/exec
// chains).
class ProcessFamilies {
 public:
  explicit ProcessFamilies(const Profile& profile) : hops_(profile.processes.size()) {
    for (const ProcessProfile& process : profile.processes) {
      pids_.insert(process.pid);
      parent_of_.try_emplace(process.pid, process.ppid);  // the first process of a pid
    }
  }

  // At most `hops_` steps up, so that a cycle of reused pids ends.
  uint32_t family_of(uint32_t pid) {
    std::vector<uint32_t> path;
    uint32_t at = pid;
    for (size_t hop = 0;; ++hop) {
      if (auto known = families_.find(at); known != families_.end()) {
        at = known->second;
        break;
      }
      path.push_back(at);
      const uint32_t parent = parent_of_.at(at);
      if (hop >= hops_ || parent == at || !pids_.count(parent)) break;
      at = parent;
    }
    for (uint32_t member : path) families_.emplace(member, at);
    return at;
  }

 private:
  size_t hops_;
  std::unordered_set<uint32_t> pids_;
  std::unordered_map<uint32_t, uint32_t> parent_of_;
  std::unordered_map<uint32_t, uint32_t> families_;
};

}  // namespace

std::vector<std::map<size_t, std::vector<uint32_t>>> find_process_shared_ties(
    const Profile& profile) {
  using Key = std::tuple<uint32_t, uint64_t, uint32_t>;  // family, address, generation
  ProcessFamilies families(profile);
  std::map<Key, std::vector<uint32_t>> users;  // each pid once, in the profile's process order
  std::set<std::pair<Key, uint32_t>> seen;
  std::vector<std::vector<std::pair<size_t, Key>>> shared(profile.processes.size());
  for (size_t p = 0; p < profile.processes.size(); ++p) {
    const ProcessProfile& process = profile.processes[p];
    const uint32_t family = families.family_of(process.pid);
    for (size_t l = 0; l < process.locks.size(); ++l) {
      const LockSummary& lock = process.locks[l];
      if (!(lock.flags & format::kLockProcessShared)) continue;
      const Key key{family, lock.address, lock.generation};
      // An unused one (listed with --all) is still told who used it; it is no user itself.
      if (lock_was_used(lock) && seen.insert({key, process.pid}).second)
        users[key].push_back(process.pid);
      shared[p].emplace_back(l, key);
    }
  }
  std::vector<std::map<size_t, std::vector<uint32_t>>> ties(profile.processes.size());
  for (size_t p = 0; p < profile.processes.size(); ++p)
    for (const auto& [lock, key] : shared[p]) {
      std::vector<uint32_t> others;
      for (uint32_t pid : users[key])
        if (pid != profile.processes[p].pid) others.push_back(pid);
      if (!others.empty()) ties[p].emplace(lock, std::move(others));
    }
  return ties;
}

}  // namespace lockscope
