// One parsed color in every space, and every difference between two.
#include "visalign/color.h"

namespace visalign::color {

ColorSpaces InAllSpaces(const ParsedColor& c) {
  ColorSpaces s;
  s.srgb = c.rgb;
  s.clipped = ClipToGamut(c.rgb);
  s.lab = c.lab;
  if (c.notation == Notation::kLab) {
    s.xyz = LabToXyz(c.lab);
    s.linear = XyzToLinear(s.xyz);
  } else {
    s.linear = ToLinear(c.rgb);
    s.xyz = LinearToXyz(s.linear);
  }
  s.xyy = XyzToXyy(s.xyz);
  s.lch = LabToLch(s.lab);
  s.hsl = RgbToHsl(c.rgb);
  return s;
}

ColorDifferences CompareColors(const ParsedColor& p, const ParsedColor& q) {
  const Rgb255 p255 = ToRgb255(p.rgb), q255 = ToRgb255(q.rgb);
  return {RgbEuclidean(p255, q255),    RgbRedmean(p255, q255),       DeltaE76(p.lab, q.lab), DeltaE2000(p.lab, q.lab),
          HueDifference(p.lab, q.lab), ChromaDistance(p.lab, q.lab), HyAB(p.lab, q.lab)};
}

}  // namespace visalign::color
