#include "report/report_sink.h"

#include <cerrno>
#include <cstring>

namespace lockscope {

std::ostream& ReportSink::stream() {
  if (stream_) return *stream_;
  errno = 0;
  file_ = std::make_unique<std::ofstream>(path_, std::ios::binary | std::ios::trunc);
  if (!*file_) {
    const int error = errno;
    file_.reset();
    throw ReportSinkError(error ? std::strerror(error) : "cannot create the file");
  }
  stream_ = file_.get();
  return *stream_;
}

void ReportSink::finish() {
  if (!stream_) return;  // nothing written through the stream (or the writer wrote path() itself)
  errno = 0;
  stream_->flush();
  if (file_) file_->close();
  if (stream_->fail() || (file_ && file_->fail())) {
    const int error = errno;
    throw ReportSinkError(error ? std::strerror(error) : "write failed");
  }
}

}  // namespace lockscope
