/**
 * Builds the configured AI provider (AI_PROVIDER): the local default or the
 * OpenAI-compatible remote. The worker role builds it once and hands it to
 * every processor as `deps.ai`. Adapters are imported on demand, so a
 * process only loads the one it uses (the local one reads its word vectors
 * at start-up).
 */
import type { Config } from '../config.js';
import type { Logger } from '../logger.js';
import type { AiProvider } from './ai-provider.js';

export async function createAiProvider(config: Config, logger: Logger): Promise<AiProvider> {
  if (config.AI_PROVIDER === 'openai') {
    const host = new URL(config.AI_OPENAI_BASE_URL).hostname;
    if (host === 'api.openai.com' && !config.AI_OPENAI_API_KEY) {
      throw new Error('AI_PROVIDER=openai with AI_OPENAI_BASE_URL at api.openai.com needs AI_OPENAI_API_KEY');
    }
    const { OpenAiCompatibleProvider, openAiOptionsFromConfig } = await import('./openai-compatible-provider.js');
    logger.info({ base_url: config.AI_OPENAI_BASE_URL }, 'ai: OpenAI-compatible provider');
    return new OpenAiCompatibleProvider(openAiOptionsFromConfig(config, logger));
  }
  const { LocalAiProvider } = await import('./local/local-provider.js');
  return LocalAiProvider.create({ vocabulary: config.AI_LOCAL_VOCABULARY, logger });
}

/** The provider a processor was given (`deps.ai`), or a start-up error naming the SKU. */
export function requireAi(deps: { ai?: AiProvider }, sku: string): AiProvider {
  if (!deps.ai)
    throw new Error(
      `${sku}: the processor needs the AI provider (deps.ai), which the worker role builds with createAiProvider`,
    );
  return deps.ai;
}
