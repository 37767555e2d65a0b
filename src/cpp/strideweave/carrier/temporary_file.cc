#include "strideweave/carrier/temporary_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <mutex>
#include <system_error>
#include <unordered_map>

#include "strideweave/util/error.h"

namespace strideweave {

namespace {

// The registered temporary files, each with the process that created it.
class TemporaryFiles {
 public:
  static TemporaryFiles& instance() {
    static auto* files = new TemporaryFiles();  // never destroyed: the atexit hook uses it
    return *files;
  }

  void add(const std::string& path) {
    std::lock_guard lock(mu_);
    paths_.emplace(path, ::getpid());
  }

  void remove(const std::string& path) {
    std::lock_guard lock(mu_);
    const auto it = paths_.find(path);
    if (it == paths_.end()) return;
    if (it->second == ::getpid()) ::unlink(path.c_str());
    paths_.erase(it);
  }

 private:
  TemporaryFiles() {
    std::atexit([] { instance().remove_all(); });
  }

  void remove_all() noexcept {
    std::lock_guard lock(mu_);
    for (const auto& [path, pid] : paths_) {
      if (pid == ::getpid()) ::unlink(path.c_str());
    }
    paths_.clear();
  }

  std::mutex mu_;
  std::unordered_map<std::string, pid_t> paths_;
};

}  // namespace

std::filesystem::path temporary_directory() {
  const char* dir = std::getenv("TMPDIR");
  return dir != nullptr && *dir != '\0' ? dir : "/tmp";
}

std::filesystem::path make_temporary_file(const std::string& carrier,
                                          const std::filesystem::path& directory,
                                          const std::string& stem, int& fd) {
  const std::filesystem::path pattern = directory / ("strideweave-" + stem + "-XXXXXX");
  std::string name = pattern.string();
  fd = ::mkostemp(name.data(), O_CLOEXEC);
  if (fd < 0) throw_os_error(errno, pattern, carrier + ": cannot create a temporary file");
  TemporaryFiles::instance().add(name);
  return name;
}

void remove_temporary_file(const std::filesystem::path& path) noexcept {
  TemporaryFiles::instance().remove(path.string());
}

std::string quoted(const std::filesystem::path& path) { return "'" + path.string() + "'"; }

void throw_os_error(int error, const std::filesystem::path& path, const std::string& what) {
  throw OSError(error, path.string(),
                what + " " + quoted(path) + ": " + std::generic_category().message(error));
}

}  // namespace strideweave
