#include "testing/postgres_server.h"

#include <fcntl.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include <fmt/format.h>

namespace visalign::testing {
namespace {
namespace fs = std::filesystem;

constexpr const char* kUnprivilegedUser = "nobody";
constexpr auto kStartPatience = std::chrono::seconds(60);
constexpr int kStartTries = 3;  // a free port taken by someone else before postgres binds it
constexpr const char* kTestSettings[] = {"fsync=off", "synchronous_commit=off", "full_page_writes=off",
                                         "max_connections=60", "listen_addresses=127.0.0.1"};

Result<std::string> ServerBinDir() {
  if (const char* dir = std::getenv("VISALIGN_PG_BINDIR")) return std::string(dir);
  std::string best;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const fs::path bin = entry.path() / "bin";
    if (!fs::exists(bin / "initdb") || !fs::exists(bin / "postgres")) continue;
    const std::string name = entry.path().filename().string();
    if (best.empty() || std::stoi(name) > std::stoi(fs::path(best).parent_path().filename().string())) best = bin;
  }
  if (best.empty())
    return Status::NotFound("no PostgreSQL server binaries", "/usr/lib/postgresql/*/bin",
                            "Debian's postgresql package (scripts/setup.sh installs it), or VISALIGN_PG_BINDIR");
  return best;
}

// The user the server runs as: nullptr for the current one, `nobody` for root.
const passwd* ServerUser() { return ::geteuid() == 0 ? ::getpwnam(kUnprivilegedUser) : nullptr; }

// Starts argv as the server user with stdout and stderr into `log`; its pid, or -1.
int Spawn(const std::vector<std::string>& argv, const std::string& log, bool die_with_parent) {
  const passwd* user = ServerUser();
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid != 0) return pid;
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
  ::dup2(fd, 1);
  ::dup2(fd, 2);
  if (user && (::setgid(user->pw_gid) != 0 || ::setuid(user->pw_uid) != 0)) ::_exit(126);
  // After setuid, which clears it: the server goes when the test program does.
  if (die_with_parent && (::prctl(PR_SET_PDEATHSIG, SIGQUIT) != 0 || ::getppid() != parent)) ::_exit(126);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  ::execv(args[0], args.data());
  ::_exit(127);
}

int WaitFor(int pid) {
  int status = 0;
  if (::waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int FreeLoopbackPort() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
    port = ntohs(addr.sin_port);
  ::close(fd);
  return port;
}

std::string Tail(const std::string& file) {
  std::ifstream in(file);
  std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return all.size() > 2000 ? all.substr(all.size() - 2000) : all;
}

}  // namespace

Result<PostgresServer*> PostgresServer::Shared() {
  static std::unique_ptr<PostgresServer> server;
  static Status started = [] {
    server.reset(new PostgresServer());
    return server->Start();
  }();
  if (!started.ok()) return started;
  return server.get();
}

Status PostgresServer::Start() {
  auto bin = ServerBinDir();
  if (!bin.ok()) return bin.status();
  char tmpl[] = "/tmp/visalign-pg-XXXXXX";
  if (::mkdtemp(tmpl) == nullptr) return Status::IoError("cannot make a temp folder", "/tmp");
  dir_ = tmpl;
  std::random_device rd;
  password_ = fmt::format("pw-{:08x}{:08x}", rd(), rd());
  { std::ofstream(dir_ + "/pw") << password_ << "\n"; }
  if (const passwd* user = ServerUser()) {
    for (const std::string& p : {dir_, dir_ + "/pw"})
      if (::chown(p.c_str(), user->pw_uid, user->pw_gid) != 0)
        return Status::IoError("cannot hand the server folder to " + std::string(kUnprivilegedUser), p);
  }
  const int initdb = WaitFor(Spawn({*bin + "/initdb", "-D", dir_ + "/data", "-U", kUser, "--pwfile=" + dir_ + "/pw",
                                    "--auth=scram-sha-256", "-E", "UTF8", "--locale=C", "--no-sync"},
                                   dir_ + "/initdb.log", false));
  if (initdb != 0)
    return Status::Unavailable(fmt::format("initdb exited with {}: {}", initdb, Tail(dir_ + "/initdb.log")), dir_);
  ::setenv("PGPASSWORD", password_.c_str(), 1);
  for (int attempt = 0; attempt < kStartTries; ++attempt) {
    port_ = FreeLoopbackPort();
    std::vector<std::string> argv = {*bin + "/postgres", "-D", dir_ + "/data", "-p", std::to_string(port_), "-k", dir_};
    for (const char* setting : kTestSettings) argv.insert(argv.end(), {"-c", setting});
    pid_ = Spawn(argv, dir_ + "/server.log", true);
    const std::string conninfo =
        fmt::format("host=127.0.0.1 port={} dbname=postgres user={} connect_timeout=2", port_, kUser);
    const auto deadline = std::chrono::steady_clock::now() + kStartPatience;
    while (std::chrono::steady_clock::now() < deadline) {
      if (PQping(conninfo.c_str()) == PQPING_OK) return Status::Ok();
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ::kill(pid_, SIGQUIT);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }
  return Status::Unavailable("postgres did not start: " + Tail(dir_ + "/server.log"), dir_);
}

PostgresServer::~PostgresServer() {
  if (pid_ > 0) {
    ::kill(pid_, SIGINT);  // fast shutdown: disconnects clients, no checkpoint wait for them
    ::waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

std::string PostgresServer::Url(const std::string& database) const {
  return fmt::format("postgres://{}@127.0.0.1:{}/{}", kUser, port_, database);
}

Status PostgresServer::Execute(const std::string& database, const std::string& sql) const {
  PGconn* conn = PQconnectdb(
      fmt::format("host=127.0.0.1 port={} dbname={} user={} password={}", port_, database, kUser, password_).c_str());
  Status st;
  if (PQstatus(conn) != CONNECTION_OK) {
    st = Status::Unavailable(PQerrorMessage(conn), Url(database));
  } else {
    PGresult* r = PQexec(conn, sql.c_str());
    const ExecStatusType s = PQresultStatus(r);
    if (s != PGRES_COMMAND_OK && s != PGRES_TUPLES_OK) st = Status::IoError(PQresultErrorMessage(r), sql);
    PQclear(r);
  }
  PQfinish(conn);
  return st;
}

Result<std::string> PostgresServer::CreateDatabase() {
  const std::string name = fmt::format("test_{}_{}", ::getpid(), ++databases_);
  Status st = Execute("postgres", "CREATE DATABASE " + name + " STRATEGY FILE_COPY");
  if (!st.ok()) return st;
  return Url(name);
}

}  // namespace visalign::testing
