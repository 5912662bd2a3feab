#!/usr/bin/env python3
# Usage: python3 samples/images.py > samples/images.http      (needs Pillow: pip install pillow)
# Builds samples/images.http: image responses as a proxy capture would hold them, including the usual trouble.
import io, struct, sys, zlib

from PIL import Image


def response(status, reason, ctype, body):
    head = f"HTTP/1.1 {status} {reason}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
    return head + body


def gradient(w, h, alpha=False):
    im = Image.new("RGBA" if alpha else "RGB", (w, h))
    im.putdata([(x * 255 // max(w - 1, 1), y * 255 // max(h - 1, 1), 128) + ((255 - x * 4 % 256,) if alpha else ())
                for y in range(h) for x in range(w)])
    return im


def save(im, fmt, **options):
    out = io.BytesIO()
    im.save(out, fmt, **options)
    return out.getvalue()


from PIL import PngImagePlugin

records = []
# 1. A PNG with alpha, a text chunk and a 72 dpi pHYs chunk.
text = PngImagePlugin.PngInfo()
text.add_text("Software", "respdecode samples")
records.append(response(200, "OK", "image/png", save(gradient(48, 32, alpha=True), "PNG", pnginfo=text,
                                                     dpi=(72, 72))))
# 2. A progressive JPEG taken with the camera turned: EXIF orientation 6, 300 dpi.
exif = Image.Exif()
exif[0x0112] = 6
records.append(response(200, "OK", "image/jpeg", save(gradient(64, 48), "JPEG", quality=85, progressive=True,
                                                      exif=exif.tobytes(), dpi=(300, 300))))
# 3. An animated GIF: three frames, looping forever.
frames = [gradient(16 + 8 * i, 16).resize((16, 16)).convert("P") for i in range(3)]
records.append(response(200, "OK", "image/gif", save(frames[0], "GIF", save_all=True, append_images=frames[1:],
                                                     loop=0, duration=100)))
# 4. A JPEG served as image/png (a misconfigured CDN): decoded as what it is, with a warning.
records.append(response(200, "OK", "image/png", save(gradient(8, 8), "JPEG", quality=90)))
# 5. A PNG cut off in transfer: an error line carrying the start of the body.
records.append(response(200, "OK", "image/png", save(gradient(32, 32), "PNG")[:-30]))
# 6. A WebP thumbnail, lossless.
records.append(response(200, "OK", "image/webp", save(gradient(20, 10), "WEBP", lossless=True)))
sys.stdout.buffer.write(b"".join(records))
