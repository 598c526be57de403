// Cluster credentials: the shared token (a file only its owner can read, or GRAPHLOOM_TOKEN)
// and PEM files for TLS.
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <iterator>

#include "graphloom/base/error.h"
#include "graphloom/distributed/rpc/graph_server.h"

namespace graphloom::distributed {

std::string read_pem_file(const std::filesystem::path& path, const char* what) {
  std::ifstream in(path);
  GL_CHECK(in.good(), "cannot read the {} file '{}'", what, path.string());
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  GL_CHECK(text.find("-----BEGIN ") != std::string::npos, "{} file '{}' is not PEM", what,
           path.string());
  return text;
}

std::string cluster_token(const std::filesystem::path& token_file) {
  if (!token_file.empty()) return read_token_file(token_file);
  const char* token = std::getenv("GRAPHLOOM_TOKEN");
  return token != nullptr ? token : "";
}

std::string read_token_file(const std::filesystem::path& path) {
  struct stat info {};
  GL_CHECK(::stat(path.c_str(), &info) == 0, "cannot read token file '{}'", path.string());
  GL_CHECK((info.st_mode & 077) == 0,
           "token file '{}' is readable by other users (mode {:o}); run chmod 600 on it",
           path.string(), info.st_mode & 0777);
  std::ifstream in(path);
  std::string token;
  std::getline(in, token);
  const auto first = token.find_first_not_of(" \t\r\n");
  const auto last = token.find_last_not_of(" \t\r\n");
  token = first == std::string::npos ? "" : token.substr(first, last - first + 1);
  GL_CHECK(!token.empty(), "token file '{}' is empty", path.string());
  return token;
}

}  // namespace graphloom::distributed
