/**
 * Integrations → AI assistants in a real browser: the /mcp address, a key made with chosen scopes
 * using the keyboard alone, the client configurations holding that key (copied to the
 * clipboard), and the key working over MCP with exactly the tools its scopes allow. axe-core
 * finds nothing; screenshots of the card, light and dark, go to test-results/assistants/.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { axe, formatViolations, launchBrowser, openApp, resultsDir, skipReason, startServer, type Server } from './harness.js';
import { httpClient } from '../mcp/helpers.js';

describe('AI assistants card', { skip: skipReason() ?? false }, () => {
  let server: Server;
  let browser: Browser;
  const dir = resultsDir('assistants');

  before(async () => {
    server = await startServer();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  test('makes a key for an assistant with the keyboard, shows each client\'s configuration with it, and the key works over MCP', async () => {
    const { page, context, problems } = await openApp(browser, server, { colorScheme: 'light' });
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
    try {
      await page.goto(`${server.url}/#/integrations`);
      const card = page.locator('#assistants');
      await card.getByTestId('mcp-url').waitFor();
      assert.equal(await card.getByTestId('mcp-url').textContent(), `${server.url}/mcp`);
      // Before a key is made the snippets show where it goes.
      assert.match(await card.getByTestId('snippet-claude-code').locator('pre').textContent() ?? '', /chy_YOUR_KEY/);

      // Keyboard only: the name field, then through the scopes (sleep:write on with Space), then Enter on the button.
      await card.getByRole('textbox', { name: 'Assistant' }).focus();
      await page.keyboard.press('ControlOrMeta+a');
      await page.keyboard.type('Claude Desktop');
      for (let i = 0; i < 4; i++) await page.keyboard.press('Tab');
      assert.equal(await page.evaluate(() => (globalThis as unknown as { document: { activeElement: { closest(s: string): { textContent: string } | null } } }).document.activeElement.closest('label')?.textContent ?? ''), 'sleep:write log and delete sleep');
      await page.keyboard.press('Space');
      await page.keyboard.press('Tab');
      await page.keyboard.press('Enter');
      const secret = (await card.getByTestId('secret-value').textContent())!;
      assert.match(secret, /^chy_/);

      const code = (await card.getByTestId('snippet-claude-code').locator('pre').textContent())!;
      assert.equal(code, `claude mcp add --transport http chyme ${server.url}/mcp --header "Authorization: Bearer ${secret}"`);
      const desktop = JSON.parse((await card.getByTestId('snippet-claude-desktop').locator('pre').textContent())!);
      assert.equal(desktop.mcpServers.chyme.env.CHYME_API_KEY, secret);
      assert.deepEqual(desktop.mcpServers.chyme.args.slice(1), ['mcp', '--url', server.url]);
      const vscode = JSON.parse((await card.getByTestId('snippet-vscode').locator('pre').textContent())!);
      assert.deepEqual(vscode.servers.chyme, { type: 'http', url: `${server.url}/mcp`, headers: { Authorization: `Bearer ${secret}` } });

      await card.getByRole('button', { name: 'Copy the Claude Code configuration' }).click();
      assert.equal(await page.evaluate(() => (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText()), code);

      // The key appears in the API keys list, with the scopes chosen.
      await page.getByTestId('api-keys').getByText('Claude Desktop').waitFor();

      const found = await axe(page);
      assert.deepEqual(found, [], formatViolations(found));
      await card.screenshot({ path: join(dir, 'assistants-light.png') });
      assert.deepEqual(problems, [], 'no console errors or CSP violations');

      const client = await httpClient(server.url, secret);
      try {
        const names = (await client.listTools()).tools.map((t) => t.name).sort();
        assert.deepEqual(names, ['delete_meal', 'get_daily_scores', 'get_digestive_state', 'get_snapshot', 'list_meals', 'list_saved_meals', 'log_meal', 'log_saved_meal', 'log_sleep', 'search_foods', 'update_meal']);
      } finally {
        await client.close();
      }
    } finally {
      await context.close();
    }
  });

  test('dark theme: the card passes axe and is pictured', async () => {
    const { page, context } = await openApp(browser, server, { colorScheme: 'dark' });
    try {
      await page.goto(`${server.url}/#/integrations`);
      const card = page.locator('#assistants');
      await card.getByTestId('mcp-url').waitFor();
      const found = await axe(page);
      assert.deepEqual(found, [], formatViolations(found));
      await card.screenshot({ path: join(dir, 'assistants-dark.png') });
    } finally {
      await context.close();
    }
  });
});
