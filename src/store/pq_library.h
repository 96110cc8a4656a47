// libpq, loaded when the first postgres:// store is opened instead of when visalign starts
// (like libcurl: backends/curl_library.h). Debian's libpq5 brings Kerberos, LDAP, SASL and GnuTLS,
// ~22 shared libraries that every invocation would otherwise map; docs/performance.md "Start-up".
#pragma once

#include <libpq-fe.h>

#include "visalign/core/status.h"

namespace visalign::store::pg {

// The libpq entry points the PostgreSQL store uses, resolved from libpq.so.5.
struct PqLibrary {
  PGconn* (*connectdbParams)(const char* const* keywords, const char* const* values, int expand_dbname);
  ConnStatusType (*status)(const PGconn* conn);
  char* (*errorMessage)(const PGconn* conn);
  void (*finish)(PGconn* conn);
  void (*reset)(PGconn* conn);
  PQnoticeProcessor (*setNoticeProcessor)(PGconn* conn, PQnoticeProcessor proc, void* arg);
  PGresult* (*exec)(PGconn* conn, const char* query);
  PGresult* (*execParams)(PGconn* conn, const char* command, int n_params, const Oid* param_types,
                          const char* const* param_values, const int* param_lengths, const int* param_formats,
                          int result_format);
  ExecStatusType (*resultStatus)(const PGresult* res);
  char* (*resultErrorMessage)(const PGresult* res);
  char* (*resultErrorField)(const PGresult* res, int field_code);
  int (*ntuples)(const PGresult* res);
  char* (*getvalue)(const PGresult* res, int row, int col);
  int (*getlength)(const PGresult* res, int row, int col);
  int (*getisnull)(const PGresult* res, int row, int col);
  char* (*cmdTuples)(PGresult* res);
  void (*clear)(PGresult* res);
};

// Loads libpq once per process (thread-safe); later calls return the same table. Unavailable at
// "PostgreSQL store" naming the library and the Debian package when it cannot be loaded.
Result<const PqLibrary*> Pq();

}  // namespace visalign::store::pg
