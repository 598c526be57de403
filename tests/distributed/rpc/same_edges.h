// The expectation that two neighbor samples are the same picks, in the same order.
#pragma once

#include <ATen/ATen.h>
#include <gtest/gtest.h>

#include "graphloom/sampling/neighbor_source.h"

namespace graphloom::distributed {

inline void expect_same_edges(const sampling::SampledEdges& a, const sampling::SampledEdges& b) {
  EXPECT_TRUE(at::equal(a.indptr, b.indptr));
  EXPECT_TRUE(at::equal(a.neighbors, b.neighbors));
  ASSERT_EQ(a.edge_ids.defined(), b.edge_ids.defined());  // undefined when not asked for
  if (a.edge_ids.defined()) {
    EXPECT_TRUE(at::equal(a.edge_ids, b.edge_ids));
  }
  ASSERT_EQ(a.edge_types.defined(), b.edge_types.defined());  // typed graphs only
  if (a.edge_types.defined()) {
    EXPECT_TRUE(at::equal(a.edge_types, b.edge_types));
  }
}

}  // namespace graphloom::distributed
