import { startApp } from './boot';

startApp();
