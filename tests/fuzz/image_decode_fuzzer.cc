// Image decoding (PNG, JPEG, WebP and the signatures refused by name), as images returned by a
// remote generator reach it. Besides "no crash, one error line": whatever the fast PNG decoder
// takes, libspng must decode to the same pixels (the fast path is only allowed to be faster), and
// decoding in place must equal decoding from a copy.
#include <string>

#include "fuzz/fuzz_support.h"
#include "imaging/codecs.h"
#include "imaging/png_decode.h"
#include "visalign/imaging/image.h"

using visalign::imaging::AlphaPolicy;
using visalign::imaging::Image;
using visalign::imaging::PngFastDecode;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view bytes = visalign::fuzz::AsText(data, size);
  const auto decoded = visalign::imaging::DecodeImage(bytes, "input.png");
  visalign::fuzz::CheckErrorLine(decoded.status());
  if (decoded.ok()) {
    VISALIGN_FUZZ_CHECK(decoded->width > 0 && decoded->height > 0);
    VISALIGN_FUZZ_CHECK(decoded->rgb.size() == static_cast<size_t>(decoded->width) * decoded->height * 3);
  }

  const AlphaPolicy composite{AlphaPolicy::Mode::kComposite, {17, 128, 250}};
  Image fast;
  if (visalign::imaging::DecodePngFast(bytes, fast, composite) != PngFastDecode::kDecoded) return 0;
  const auto general = visalign::imaging::DecodePng(bytes, "input.png", composite);
  VISALIGN_FUZZ_CHECK(general.ok(), "the fast PNG path took a file libspng refuses: " + general.status().ToString());
  VISALIGN_FUZZ_CHECK(general->width == fast.width && general->height == fast.height);
  VISALIGN_FUZZ_CHECK(general->rgb == fast.rgb, "the fast PNG path and libspng disagree on pixels");
  VISALIGN_FUZZ_CHECK(general->alpha_min == fast.alpha_min);

  std::string writable(bytes);
  Image in_place;
  bool overwritten = false;
  VISALIGN_FUZZ_CHECK(visalign::imaging::DecodePngFastInPlace(writable, in_place, overwritten, composite) ==
                      PngFastDecode::kDecoded);
  VISALIGN_FUZZ_CHECK(in_place.rgb == fast.rgb && in_place.alpha_min == fast.alpha_min);
  return 0;
}
