// Hues and Cues benchmark: the 480-cell board (16 rows A–P × 30 columns) mapped to CIE xy, the
// 100 clue words, ~300 human players' answers, and the published statistical comparison of a
// model's top-5 board cells with the human answers:
//   - Mahalanobis d² of the model's top-1 cell against the word's human mean and covariance;
//   - Hotelling two-sample T² between the human answers and the model's similarity-weighted
//     top-5 "confidence cloud" (the published recipe, reproduced exactly; see docs/hues.md),
//     plus survival-function p-values and Benjamini–Hochberg q-values over the words;
//   - the human leave-one-out baseline (how often a human is an outlier to the other humans);
//   - the nonsense baseline: does a model collapse to a default color on meaningless words.
// Data comes from data/hues/ (see data/hues/NOTICE.md). Every loader validates its input and
// returns errors naming the file, line and offending value.
#pragma once

#include "visalign/benchmarks/hues/board.h"
#include "visalign/benchmarks/hues/embeddings.h"
#include "visalign/benchmarks/hues/evaluate.h"
#include "visalign/benchmarks/hues/explorer.h"
#include "visalign/benchmarks/hues/humans.h"
#include "visalign/benchmarks/hues/models.h"
#include "visalign/benchmarks/hues/nonsense.h"
#include "visalign/benchmarks/hues/predictions.h"
#include "visalign/benchmarks/hues/regions.h"
#include "visalign/benchmarks/hues/words.h"
