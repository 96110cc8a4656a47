// Canny edge detection, bit-for-bit equal to OpenCV's cv::Canny(gray, low, high, apertureSize 3,
// L2gradient false) on 8-bit single-channel input, but many times faster on noisy planes: one
// pass over the rows runs the vectorised Sobel (which codes each magnitude with its suppression
// direction) and non-maximum suppression (pixel_kernels.h, AVX2 when available; no branches per
// pixel, rows stay in L1), leaving one bit per pixel for strong and for undecided pixels;
// hysteresis then joins the undecided pixels next to an edge 64 at a time and floods only from
// the few beyond.
// What OpenCV computes, and therefore this: dx, dy = 3x3 Sobel with BORDER_REPLICATE; magnitude
// m = |dx| + |dy| (0 outside the image); non-maximum suppression in 4 directions with OpenCV's
// fixed-point tan(22.5°) test and tie rules; a pixel that survives with m > low may be an edge,
// with m > high it is one; edges are the 8-connected components of the first kind that contain
// one of the second (hysteresis). Only the edge set is used, so OpenCV's traversal order does not
// matter. Equality with cv::Canny is tested on random, noisy, striped and checkerboard planes.
#pragma once

#include <cstdint>
#include <vector>

#include "imaging/pixel_kernels.h"
#include "visalign/imaging/purity.h"

namespace visalign::imaging {

// Integer thresholds on |dx| + |dy| (cv::Canny floors its double thresholds to these).
struct CannyThresholds {
  int low = 0;
  int high = 0;
};

// Number of edge pixels of `gray` (non-empty). If `edges` is given, it receives the edge map as
// cv::Canny writes it: width * height bytes, 255 on edges, 0 elsewhere. Uses the best kernels
// this CPU runs; tests pass a build explicitly.
int64_t CannyEdges(const GrayImage& gray, CannyThresholds thresholds, std::vector<uint8_t>* edges = nullptr);
int64_t CannyEdges(const GrayImage& gray, CannyThresholds thresholds, std::vector<uint8_t>* edges,
                   const PixelKernels& kernels);

}  // namespace visalign::imaging
