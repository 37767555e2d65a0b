// Temporary files of the file carriers (FileBacked, BlockDeviceCarrier), and
// the OSError their failed system calls throw.
//
// A temporary file is registered with the process that created it; it is
// removed by remove_temporary_file and at normal process exit (an atexit hook,
// registered with the first file, removes the files this process created; a
// forked child never removes its parent's). _exit, a kill or a crash skip it.
//
// Thread safety: every function may be called from any thread.
#pragma once

#include <filesystem>
#include <string>

namespace strideweave {

// $TMPDIR when set and not empty, else /tmp.
std::filesystem::path temporary_directory();

// A new file "<directory>/strideweave-<stem>-XXXXXX" made by mkostemp,
// registered for removal; its descriptor (O_RDWR | O_CLOEXEC) is stored in
// `fd`. Throws OSError (errno, path) naming `carrier` when it cannot be made.
std::filesystem::path make_temporary_file(const std::string& carrier,
                                          const std::filesystem::path& directory,
                                          const std::string& stem, int& fd);

// Forgets the temporary file `path` and removes it when this process created
// it; nothing for a path that is not registered.
void remove_temporary_file(const std::filesystem::path& path) noexcept;

// "'<path>'" for messages.
std::string quoted(const std::filesystem::path& path);

// Throws OSError(error, path) with the message "<what> '<path>': <reason>".
[[noreturn]] void throw_os_error(int error, const std::filesystem::path& path,
                                 const std::string& what);

}  // namespace strideweave
