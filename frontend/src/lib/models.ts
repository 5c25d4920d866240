// Model providers and their settings as the API sends them (Settings → Models).

export type ModelProvider = { name: string; label: string; models: string[]; source: 'env' | 'app' | 'local' };

export type ModelsInfo = { providers: ModelProvider[]; default: { provider: string; model: string } };

export type ProviderSetting = {
  name: string;
  label: string;
  configured: boolean;
  source: '' | 'env' | 'app' | 'local';
  hint: string;
  base_url: string;
};
