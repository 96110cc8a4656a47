// Static figures for `visalign report --figures`, only in the page ExportFigures renders: each
// figure's SVG as vega writes it, with every <text> replaced by a <path> of its glyph outlines in
// the page's own font (DejaVu Sans, drawn by opentype.js), so the file looks the same on any
// machine and names no font; the PNG is that same SVG rasterised by the browser at 2x. Both go into
// the page as base64 <pre> elements for Chromium's --dump-dom.
(function () {
  'use strict';
  const kScale = 2;
  const kDecimals = 2;  // of path coordinates: enough at 2x, and the same text on every run
  const kDefaultFontSize = 11;  // vega's, for a <text> without font-size

  function base64Utf8(text) {
    const bytes = new TextEncoder().encode(text);
    let binary = '';
    for (let i = 0; i < bytes.length; i += 0x8000) binary += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
    return btoa(binary);
  }

  function isBold(weight) {
    return weight === 'bold' || weight === 'bolder' || Number(weight) >= 600;
  }

  // The outlines of a vega <text>: one line, or one <tspan> per line (each after the first moved
  // down by its dy), anchored at x = 0 as text-anchor says; vega places the element by its transform.
  function outlines(text, fonts) {
    const size = parseFloat(text.getAttribute('font-size')) || kDefaultFontSize;
    const font = isBold(text.getAttribute('font-weight') || '') ? fonts.bold : fonts.normal;
    const anchor = text.getAttribute('text-anchor') || 'start';
    const spans = Array.from(text.children).filter((c) => c.localName === 'tspan');
    const lines = spans.length
      ? spans.map((s) => ({ text: s.textContent, dy: parseFloat(s.getAttribute('dy')) || 0 }))
      : [{ text: text.textContent, dy: 0 }];
    let y = 0;
    let d = '';
    for (const line of lines) {
      y += line.dy;
      const width = font.getAdvanceWidth(line.text, size);
      const x = anchor === 'middle' ? -width / 2 : anchor === 'end' ? -width : 0;
      d += font.getPath(line.text, x, y, size).toPathData(kDecimals);
    }
    return d;
  }

  // `svg` with each <text> as a <path> that keeps its placement and paint (fill, opacity, transform).
  function textToPaths(svg, fonts) {
    const doc = new DOMParser().parseFromString(svg, 'image/svg+xml');
    const ns = doc.documentElement.namespaceURI;
    for (const text of Array.from(doc.getElementsByTagNameNS(ns, 'text'))) {
      const d = outlines(text, fonts);
      if (!d) {
        text.remove();
        continue;
      }
      const path = doc.createElementNS(ns, 'path');
      for (const a of Array.from(text.attributes))
        if (!a.name.startsWith('font-') && a.name !== 'text-anchor') path.setAttribute(a.name, a.value);
      path.setAttribute('d', d);
      text.replaceWith(path);
    }
    return new XMLSerializer().serializeToString(doc);
  }

  async function pngOf(svg) {
    const root = new DOMParser().parseFromString(svg, 'image/svg+xml').documentElement;
    const image = new Image();
    image.src = 'data:image/svg+xml;base64,' + base64Utf8(svg);
    await image.decode();
    const canvas = document.createElement('canvas');
    canvas.width = Math.round(parseFloat(root.getAttribute('width')) * kScale);
    canvas.height = Math.round(parseFloat(root.getAttribute('height')) * kScale);
    canvas.getContext('2d').drawImage(image, 0, 0, canvas.width, canvas.height);
    return canvas.toDataURL('image/png').replace(/^data:image\/png;base64,/, '');
  }

  // figures: [{id}], views: {id: vega View}, fontBytes: {normal, bold} TrueType ArrayBuffers.
  window.visalignExportFigures = async function (figures, views, fontBytes) {
    const fonts = { normal: opentype.parse(fontBytes.normal), bold: opentype.parse(fontBytes.bold) };
    const out = document.createElement('div');
    out.id = 'visalign-export';
    for (const figure of figures) {
      const svgText = textToPaths(await views[figure.id].toSVG(), fonts);
      const svg = document.createElement('pre');
      svg.dataset.figure = figure.id;
      svg.dataset.format = 'svg';
      svg.textContent = base64Utf8(svgText);
      const png = document.createElement('pre');
      png.dataset.figure = figure.id;
      png.dataset.format = 'png';
      png.textContent = await pngOf(svgText);
      out.append(svg, png);
    }
    document.body.appendChild(out);
  };
})();
