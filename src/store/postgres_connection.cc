#include "store/postgres_connection.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "store/pq_library.h"

namespace visalign::store::pg {
namespace {

// The libpq every Connection and Rows calls; Connection::Open, the only way to either, loaded it.
const PqLibrary& Lib() { return *Pq().value(); }

constexpr const char* kConnectTimeoutSeconds = "10";
constexpr const char* kExpected = "a reachable PostgreSQL server and a database this user may write";
constexpr const char* kDeadlock = "40P01";
constexpr const char* kSerializationFailure = "40001";
constexpr const char* kConnectionExceptionClass = "08";

// `message` as one line: libpq's lines joined with "; ", each secret replaced by "***".
std::string OneLine(std::string message, const std::vector<std::string>& secrets) {
  for (const std::string& secret : secrets) {
    if (secret.empty()) continue;
    for (size_t at = message.find(secret); at != std::string::npos; at = message.find(secret, at + 3))
      message.replace(at, secret.size(), "***");
  }
  std::string out;
  for (size_t start = 0; start < message.size();) {
    size_t end = message.find('\n', start);
    if (end == std::string::npos) end = message.size();
    std::string line = message.substr(start, end - start);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
    size_t first = line.find_first_not_of(' ');
    if (first != std::string::npos) out += (out.empty() ? "" : "; ") + line.substr(first);
    start = end + 1;
  }
  return out;  // Status::ToString escapes what a message must not print
}

std::string ArrayElement(const std::string& value) {
  std::string out = "\"";
  for (char c : value) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// Every password `location` carries (in its user info or a password= parameter), as written and
// percent-decoded.
std::vector<std::string> PasswordsIn(const std::string& location) {
  std::vector<std::string> out;
  const size_t scheme_end = location.find("://");
  if (scheme_end == std::string::npos) return out;
  const size_t authority = scheme_end + 3;
  const size_t authority_end = location.find_first_of("/?", authority);
  const std::string host_part = location.substr(authority, authority_end - authority);
  const size_t at = host_part.rfind('@');
  if (at != std::string::npos) {
    const size_t colon = host_part.find(':');
    if (colon < at) out.push_back(host_part.substr(colon + 1, at - colon - 1));
  }
  for (size_t p = location.find("password=", authority); p != std::string::npos;
       p = location.find("password=", p + 1)) {
    const size_t value = p + 9;
    out.push_back(location.substr(value, location.find('&', value) - value));
  }
  const size_t written = out.size();
  for (size_t i = 0; i < written; ++i) {
    const std::string& s = out[i];
    std::string decoded;
    for (size_t j = 0; j < s.size(); ++j) {
      const bool escape = s[j] == '%' && j + 2 < s.size() && std::isxdigit(static_cast<unsigned char>(s[j + 1])) &&
                          std::isxdigit(static_cast<unsigned char>(s[j + 2]));
      if (!escape) {
        decoded += s[j];
        continue;
      }
      decoded += static_cast<char>(std::stoi(s.substr(j + 1, 2), nullptr, 16));
      j += 2;
    }
    if (decoded != s) out.push_back(decoded);
  }
  return out;
}

void IgnoreNotice(void*, const char*) {}

}  // namespace

std::string WithoutPasswords(const std::string& location) {
  const size_t scheme_end = location.find("://");
  if (scheme_end == std::string::npos) return location;
  const size_t authority = scheme_end + 3;
  const size_t authority_end = std::min(location.find_first_of("/?", authority), location.size());
  std::string host_part = location.substr(authority, authority_end - authority);
  const size_t at = host_part.rfind('@');
  const size_t colon = host_part.find(':');
  if (at != std::string::npos && colon < at) host_part.erase(colon, at - colon);
  std::string out = location.substr(0, authority) + host_part;
  const size_t query = location.find('?', authority_end);
  out += location.substr(authority_end, std::min(query, location.size()) - authority_end);
  if (query == std::string::npos) return out;
  std::string kept;
  for (size_t start = query + 1; start <= location.size();) {
    size_t end = location.find('&', start);
    if (end == std::string::npos) end = location.size();
    const std::string param = location.substr(start, end - start);
    if (!param.empty() && param.rfind("password=", 0) != 0) kept += (kept.empty() ? "" : "&") + param;
    start = end + 1;
  }
  return kept.empty() ? out : out + "?" + kept;
}

Result<std::string> PasswordFromEnvironment(const std::string& variable) {
  if (variable.empty()) return std::string();
  const char* value = std::getenv(variable.c_str());
  if (value == nullptr)
    return Status::InvalidArgument("environment variable " + variable + " is not set", "store password variable",
                                   "the name of a variable holding the database password");
  return std::string(value);
}

Params& Params::Add(std::string value) {
  values_.emplace_back(std::move(value));
  formats_.push_back(0);
  return *this;
}
Params& Params::Add(int64_t value) { return Add(std::to_string(value)); }
Params& Params::Add(double value) { return Add(fmt::format("{}", value)); }
Params& Params::Add(std::optional<int64_t> value) {
  if (value) return Add(*value);
  values_.emplace_back(std::nullopt);
  formats_.push_back(0);
  return *this;
}
Params& Params::AddBytes(std::string bytes) {
  values_.emplace_back(std::move(bytes));
  formats_.push_back(1);
  return *this;
}
Params& Params::AddTextArray(const std::vector<std::string>& values) {
  std::string literal = "{";
  for (size_t i = 0; i < values.size(); ++i) literal += (i ? "," : "") + ArrayElement(values[i]);
  return Add(literal + "}");
}
Params& Params::AddIntArray(const std::vector<std::optional<int64_t>>& values) {
  std::string literal = "{";
  for (size_t i = 0; i < values.size(); ++i)
    literal += (i ? "," : "") + (values[i] ? std::to_string(*values[i]) : std::string("NULL"));
  return Add(literal + "}");
}

Params& Params::AddRealArray(const std::vector<double>& values) {
  std::string literal = "{";
  for (size_t i = 0; i < values.size(); ++i) literal += fmt::format("{}{}", i ? "," : "", values[i]);
  return Add(literal + "}");
}

Rows::Rows(PGresult* result) : result_(result, Lib().clear) {}
int Rows::size() const { return Lib().ntuples(result_.get()); }
bool Rows::IsNull(int row, int col) const { return Lib().getisnull(result_.get(), row, col) != 0; }
bool Connection::connected() const { return Lib().status(conn_) == CONNECTION_OK; }

std::string Rows::Text(int row, int col) const {
  return std::string(Lib().getvalue(result_.get(), row, col), Lib().getlength(result_.get(), row, col));
}
int64_t Rows::Int(int row, int col) const { return std::strtoll(Lib().getvalue(result_.get(), row, col), nullptr, 10); }
double Rows::Real(int row, int col) const { return std::strtod(Lib().getvalue(result_.get(), row, col), nullptr); }
size_t Rows::affected() const { return std::strtoull(Lib().cmdTuples(result_.get()), nullptr, 10); }

Result<std::unique_ptr<Connection>> Connection::Open(const std::string& location, const std::string& password,
                                                     const std::string& where) {
  VISALIGN_RETURN_IF_ERROR(Pq().status().WithContext(where));
  // Later keywords override what the URI says: the timeout is a default, the password is not.
  std::vector<const char*> keys = {"connect_timeout", "fallback_application_name", "dbname"};
  std::vector<const char*> values = {kConnectTimeoutSeconds, "visalign", location.c_str()};
  if (!password.empty()) {
    keys.push_back("password");
    values.push_back(password.c_str());
  }
  keys.push_back(nullptr);
  values.push_back(nullptr);
  PGconn* conn = Lib().connectdbParams(keys.data(), values.data(), /*expand_dbname=*/1);
  std::vector<std::string> secrets = PasswordsIn(location);
  secrets.push_back(password);
  if (conn == nullptr || Lib().status(conn) != CONNECTION_OK) {
    std::string message = conn ? Lib().errorMessage(conn) : "out of memory";
    Lib().finish(conn);
    return Status::Unavailable("cannot connect to PostgreSQL: " + OneLine(message, secrets), where,
                               "a reachable PostgreSQL server, user and database, and its password in PGPASSWORD, "
                               "~/.pgpass or the variable --store-password-env names");
  }
  Lib().setNoticeProcessor(conn, IgnoreNotice, nullptr);
  return std::unique_ptr<Connection>(new Connection(conn, std::move(secrets), where));
}

Connection::~Connection() { Lib().finish(conn_); }

Status Connection::Error(const PGresult* result) {
  last_sqlstate_.clear();
  if (const char* state = result ? Lib().resultErrorField(result, PG_DIAG_SQLSTATE) : nullptr) last_sqlstate_ = state;
  const std::string message = result ? Lib().resultErrorMessage(result) : Lib().errorMessage(conn_);
  return Status::IoError("database error: " + OneLine(message.empty() ? Lib().errorMessage(conn_) : message, secrets_),
                         where_, kExpected);
}

bool Connection::Retryable() {
  if (Lib().status(conn_) == CONNECTION_BAD) {
    Lib().reset(conn_);
    return Lib().status(conn_) == CONNECTION_OK;
  }
  return last_sqlstate_ == kDeadlock || last_sqlstate_ == kSerializationFailure ||
         last_sqlstate_.rfind(kConnectionExceptionClass, 0) == 0;
}

Result<Rows> Connection::Exec(const char* sql, const Params& params, bool binary_results) {
  std::vector<const char*> values;
  std::vector<int> lengths;
  for (const auto& v : params.values_) {
    values.push_back(v ? v->data() : nullptr);
    lengths.push_back(v ? static_cast<int>(v->size()) : 0);
  }
  PGresult* result = Lib().execParams(conn_, sql, static_cast<int>(values.size()), nullptr, values.data(),
                                      lengths.data(), params.formats_.data(), binary_results ? 1 : 0);
  const ExecStatusType status = result ? Lib().resultStatus(result) : PGRES_FATAL_ERROR;
  if (status != PGRES_COMMAND_OK && status != PGRES_TUPLES_OK) {
    Status st = Error(result);
    Lib().clear(result);
    return st;
  }
  return Rows(result);
}

Status Connection::ExecScript(const char* sql) {
  PGresult* result = Lib().exec(conn_, sql);
  const ExecStatusType status = result ? Lib().resultStatus(result) : PGRES_FATAL_ERROR;
  Status st = status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK ? Status::Ok() : Error(result);
  Lib().clear(result);
  return st;
}

}  // namespace visalign::store::pg
