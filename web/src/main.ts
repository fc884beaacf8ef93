import "./style.css";
import { AccountPanel } from "./account-panel.ts";
import { type Api, type BacktestRunAnswer, connect, documentChoices } from "./api.ts";
import { BacktestPanel } from "./backtest-panel.ts";
import { byId } from "./dom.ts";
import { mountKeyPanel, storedKey } from "./key-panel.ts";
import { MarketPanel } from "./market-panel.ts";
import { MarketsPanel } from "./markets-panel.ts";

/**
 * The page at `/`: the key, the account, markets, one market, backtests (DESIGN 3.9). Each panel is a
 * module of its own; this one wires them: the key makes the client they share, a market opened from
 * the list or from a backtest's results shows that backtest's trades.
 */

let api: Api | null = null;
let lastBacktest: BacktestRunAnswer | null = null;

const account = new AccountPanel(byId("account-panel"));
const market = new MarketPanel(byId("market-panel"), byId("market-title"));

async function openMarket(slug: string): Promise<void> {
  if (!api) return;
  await market.open(api, slug);
  market.showTrades(lastBacktest);
}

const markets = new MarketsPanel(byId("markets-panel"), {
  api: () => api,
  onOpen: (slug) => void openMarket(slug),
});
const backtest = new BacktestPanel(byId("backtest-panel"), {
  api: () => api,
  onOpen: (slug) => void openMarket(slug),
  onQuotaSpent: () => {
    if (api) void account.load(api, true);
  },
  onResults: (answer) => {
    lastBacktest = answer;
    market.showTrades(answer);
  },
});

async function useKey(key: string | null): Promise<void> {
  api = key ? connect(key, (limits) => account.noteLimits(limits)) : null;
  lastBacktest = null;
  backtest.reset();
  if (!api) {
    account.clear();
    return;
  }
  if (await account.load(api)) await markets.load(0);
}

mountKeyPanel(byId("key-panel"), (key) => void useKey(key));

void documentChoices().then((choices) => {
  markets.setChoices(choices.coins, choices.marketTypes);
  backtest.setChoices(choices.presets, choices.coins, choices.marketTypes);
  document.body.dataset.ready = "true";
  const key = storedKey();
  if (key) void useKey(key);
});
