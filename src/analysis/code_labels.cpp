#include "analysis/code_labels.h"

namespace lockscope {

// std::mutex::lock inlines __gthread_mutex_lock from gthr-default.h, which is not where the
// user's code takes the lock.
bool is_system_file(const std::string& file) {
  return file.rfind("/usr/", 0) == 0 || file.find("/include/c++/") != std::string::npos ||
         file.find("gthr-default.h") != std::string::npos;
}

std::string short_function_name(std::string name) {
  const std::string anonymous = "(anonymous namespace)::";
  for (size_t at; (at = name.find(anonymous)) != std::string::npos;)
    name.erase(at, anonymous.size());
  if (!name.empty() && (name.back() == ')' || name.ends_with(" const"))) {
    int depth = 0;
    for (size_t i = name.size(); i-- > 0;) {
      if (name[i] == ')') ++depth;
      if (name[i] == '(' && --depth == 0) {
        if (i > 0) name.erase(i);
        break;
      }
    }
  }
  return name;
}

}  // namespace lockscope
