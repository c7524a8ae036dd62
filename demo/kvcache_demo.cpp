// The bundled demo workload: a small in-memory key-value cache under load, with the three kinds of
// lock a profiler must tell apart.
//   - `CacheShard::mutex` guards a hash map that every worker hits for every request: contended.
//   - `Statistics::mutex` is taken once per 256 requests to publish counters: lightly used.
//   - `SharedJournal::mutex` is a process-shared mutex in shared memory, used by the workers and by
//     a forked "snapshot" child process that appends to the same journal.
// Usage: lockscope_demo [threads=4] [requests per thread=200000]
#include <pthread.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

namespace {

struct CacheShard {
  std::mutex mutex;
  std::unordered_map<uint64_t, std::string> entries;
};

struct Statistics {
  pthread_mutex_t mutex;
  uint64_t hits = 0;
  uint64_t misses = 0;
  Statistics() { pthread_mutex_init(&mutex, nullptr); }
  ~Statistics() { pthread_mutex_destroy(&mutex); }
};

struct SharedJournal {  // lives in MAP_SHARED memory, visible to the forked child
  pthread_mutex_t mutex;
  uint64_t appended;
  uint64_t checksum;
};

SharedJournal* create_shared_journal() {
  void* memory = mmap(nullptr, sizeof(SharedJournal), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED) {
    std::perror("mmap");
    std::exit(1);
  }
  auto* journal = static_cast<SharedJournal*>(memory);
  pthread_mutexattr_t attributes;
  pthread_mutexattr_init(&attributes);
  pthread_mutexattr_setpshared(&attributes, PTHREAD_PROCESS_SHARED);
  pthread_mutex_init(&journal->mutex, &attributes);
  pthread_mutexattr_destroy(&attributes);
  journal->appended = 0;
  journal->checksum = 0;
  return journal;
}

void append_to_journal(SharedJournal& journal, uint64_t value) {
  pthread_mutex_lock(&journal.mutex);
  ++journal.appended;
  journal.checksum = journal.checksum * 31 + value;
  pthread_mutex_unlock(&journal.mutex);
}

uint64_t next_key(uint64_t& state) {  // xorshift: a deterministic request stream per worker
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state % 5000;
}

void serve_requests(CacheShard& cache, Statistics& statistics, SharedJournal& journal,
                    unsigned worker, unsigned requests) {
  const std::string name = "kv-worker-" + std::to_string(worker);
  pthread_setname_np(pthread_self(), name.c_str());  // shown in the report's threads table
  uint64_t state = 0x9E3779B97F4A7C15ull + worker;
  uint64_t hits = 0, misses = 0;
  for (unsigned i = 0; i < requests; ++i) {
    const uint64_t key = next_key(state);
    {
      std::lock_guard<std::mutex> guard(cache.mutex);  // the hot, contended lock
      auto found = cache.entries.find(key);
      if (found != cache.entries.end()) {
        ++hits;
      } else {
        ++misses;
        cache.entries.emplace(key, std::to_string(key * 2654435761u));
      }
    }
    if ((i & 255) == 255) {
      pthread_mutex_lock(&statistics.mutex);  // the light lock
      statistics.hits += hits;
      statistics.misses += misses;
      pthread_mutex_unlock(&statistics.mutex);
      hits = misses = 0;
    }
    if ((i & 4095) == 0) append_to_journal(journal, key);
  }
  pthread_mutex_lock(&statistics.mutex);
  statistics.hits += hits;
  statistics.misses += misses;
  pthread_mutex_unlock(&statistics.mutex);
}

void run_snapshot_child(SharedJournal& journal) {
  pthread_setname_np(pthread_self(), "snapshotter");
  for (int i = 0; i < 100; ++i) {
    append_to_journal(journal, static_cast<uint64_t>(i));
    usleep(500);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const unsigned threads = argc > 1 ? static_cast<unsigned>(std::atoi(argv[1])) : 4;
  const unsigned requests = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 200000;
  if (threads == 0 || requests == 0) {
    std::fprintf(stderr, "usage: %s [threads>0] [requests-per-thread>0]\n", argv[0]);
    return 2;
  }
  CacheShard cache;
  Statistics statistics;
  SharedJournal* journal = create_shared_journal();

  const pid_t snapshotter = fork();
  if (snapshotter < 0) {
    std::perror("fork");
    return 1;
  }
  if (snapshotter == 0) {
    run_snapshot_child(*journal);
    _exit(0);
  }
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < threads; ++w)
    workers.emplace_back(serve_requests, std::ref(cache), std::ref(statistics), std::ref(*journal),
                         w, requests);
  for (std::thread& worker : workers) worker.join();
  int status = 0;
  waitpid(snapshotter, &status, 0);

  std::printf("served %llu requests: %llu hits, %llu misses; journal %llu entries\n",
              static_cast<unsigned long long>(statistics.hits + statistics.misses),
              static_cast<unsigned long long>(statistics.hits),
              static_cast<unsigned long long>(statistics.misses),
              static_cast<unsigned long long>(journal->appended));
  const bool complete = statistics.hits + statistics.misses == uint64_t{threads} * requests;
  return complete && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
