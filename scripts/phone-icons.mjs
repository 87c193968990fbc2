// Renders the phone app's icon (renderer/phone-public/icon.svg) to the PNG sizes an installable web
// app needs (192 and 512 for Android's install, 180 for iOS's home screen), with the system's
// Chromium: `CHROMIUM_PATH=/usr/bin/chromium node scripts/phone-icons.mjs`. The PNGs are committed;
// run this again after changing the SVG. The ring sits within the central 80 % circle, so the same
// 512 px file also serves as the maskable icon (Android crops it to its own shape).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', 'renderer', 'phone-public');
const svg = readFileSync(join(dir, 'icon.svg'), 'utf8');
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' });
try {
  for (const size of [180, 192, 512]) {
    const page = await browser.newPage({ viewport: { width: size, height: size }, deviceScaleFactor: 1 });
    await page.setContent(`<style>html,body{margin:0}svg{display:block;width:${size}px;height:${size}px}</style>${svg}`);
    await page.screenshot({ path: join(dir, `icon-${size}.png`), omitBackground: false });
    await page.close();
  }
} finally {
  await browser.close();
}
