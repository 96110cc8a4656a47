#include "store/pq_library.h"

#include "visalign/core/shared_library.h"

namespace visalign::store::pg {
namespace {

constexpr char kPackage[] = "libpq5 (apt-get install -y libpq5)";

Result<PqLibrary> Load() {
  VISALIGN_ASSIGN_OR_RETURN(SharedLibrary library, SharedLibrary::Open("libpq.so.5", "PostgreSQL store", kPackage));
  PqLibrary pq{};
  library.Resolve("PQconnectdbParams", pq.connectdbParams)
      .Resolve("PQstatus", pq.status)
      .Resolve("PQerrorMessage", pq.errorMessage)
      .Resolve("PQfinish", pq.finish)
      .Resolve("PQreset", pq.reset)
      .Resolve("PQsetNoticeProcessor", pq.setNoticeProcessor)
      .Resolve("PQexec", pq.exec)
      .Resolve("PQexecParams", pq.execParams)
      .Resolve("PQresultStatus", pq.resultStatus)
      .Resolve("PQresultErrorMessage", pq.resultErrorMessage)
      .Resolve("PQresultErrorField", pq.resultErrorField)
      .Resolve("PQntuples", pq.ntuples)
      .Resolve("PQgetvalue", pq.getvalue)
      .Resolve("PQgetlength", pq.getlength)
      .Resolve("PQgetisnull", pq.getisnull)
      .Resolve("PQcmdTuples", pq.cmdTuples)
      .Resolve("PQclear", pq.clear);
  VISALIGN_RETURN_IF_ERROR(library.Complete(std::string("libpq 10 or later from the Debian package ") + kPackage));
  return pq;  // the library stays loaded for the life of the process
}

}  // namespace

Result<const PqLibrary*> Pq() {
  static const Result<PqLibrary> loaded = Load();
  if (!loaded.ok()) return loaded.status();
  return &*loaded;
}

}  // namespace visalign::store::pg
