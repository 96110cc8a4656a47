// A gtest fixture with a fresh, empty database of the program's PostgresServer (postgres_server.h).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "testing/postgres_server.h"

namespace visalign::testing {

class PostgresDatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = PostgresServer::Shared();
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = *server;
    auto url = server_->CreateDatabase();
    ASSERT_TRUE(url.ok()) << url.status().ToString();
    url_ = *url;
    database_ = url_.substr(url_.rfind('/') + 1);
  }

  PostgresServer* server_ = nullptr;
  std::string url_;  // postgres://visalign@127.0.0.1:<port>/<database_>
  std::string database_;
};

}  // namespace visalign::testing
